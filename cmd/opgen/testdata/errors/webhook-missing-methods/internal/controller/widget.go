// Package controller has a webhook type that lost methods.
package controller

import (
	"context"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/webhook"

	v1 "github.com/opgen-sdk/opgen/cmd/opgen/testdata/errors/webhook-missing-methods/apis/v1"
)

type WidgetController struct{}

func NewWidgetController(*runtime.Operator) *WidgetController { return &WidgetController{} }

func (*WidgetController) Reconcile(context.Context, *plug.Action[*v1.Widget]) error { return nil }

// WidgetWebhook has ValidateCreate only: the user removed the others.
type WidgetWebhook struct{}

func (*WidgetWebhook) ValidateCreate(context.Context, *v1.Widget) (webhook.Warnings, error) {
	return nil, nil
}
