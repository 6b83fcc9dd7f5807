package controller

import (
	"context"

	"github.com/opgen-sdk/opgen/pkg/webhook"

	storev1 "github.com/opgen-sdk/opgen/gen/testdata/webhooks/apis/store/v1"
)

// ValidateCreate accepts.
func (w *WidgetWebhook) ValidateCreate(context.Context, *storev1.Widget) (webhook.Warnings, error) {
	return nil, nil
}

// ValidateUpdate accepts.
func (w *WidgetWebhook) ValidateUpdate(_ context.Context, _, _ *storev1.Widget) (webhook.Warnings, error) {
	return nil, nil
}

// ValidateDelete accepts.
func (w *WidgetWebhook) ValidateDelete(context.Context, *storev1.Widget) (webhook.Warnings, error) {
	return nil, nil
}

// Default sets nothing.
func (w *WidgetWebhook) Default(context.Context, *storev1.Widget) error { return nil }
