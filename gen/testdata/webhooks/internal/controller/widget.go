package controller

import (
	"context"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"

	storev1 "github.com/opgen-sdk/opgen/gen/testdata/webhooks/apis/store/v1"
)

// WidgetController handles Widgets.
type WidgetController struct{}

// NewWidgetController returns the handler.
func NewWidgetController(*runtime.Operator) *WidgetController { return &WidgetController{} }

// Reconcile does nothing.
func (c *WidgetController) Reconcile(context.Context, *plug.Action[*storev1.Widget]) error {
	return nil
}

// WidgetWebhook admits Widgets with what it needs from op.
type WidgetWebhook struct{ op *runtime.Operator }

// NewWidgetWebhook returns the webhook that Setup registers.
func NewWidgetWebhook(op *runtime.Operator) *WidgetWebhook { return &WidgetWebhook{op: op} }
