// Package controller has handlers whose wiring is wrong.
package controller

import (
	"context"

	v1 "github.com/opgen-sdk/opgen/cmd/opgen/testdata/errors/wiring/apis/v1"
	"github.com/opgen-sdk/opgen/pkg/plug"
)

// WidgetController has no NewWidgetController.
type WidgetController struct{}

func (*WidgetController) Add(context.Context, *plug.Action[*v1.Widget]) error       { return nil }
func (*WidgetController) Modify(context.Context, *plug.Action[*v1.Widget]) error    { return nil }
func (*WidgetController) Reconcile(context.Context, *plug.Action[*v1.Widget]) error { return nil }

// GadgetController is built without the operator.
type GadgetController struct{}

// NewGadgetController takes no operator.
func NewGadgetController() *GadgetController { return &GadgetController{} }

func gadgetsOfConfigMap() {}

func (*GadgetController) Add(context.Context, *plug.Action[*v1.Gadget]) error       { return nil }
func (*GadgetController) Modify(context.Context, *plug.Action[*v1.Gadget]) error    { return nil }
func (*GadgetController) Reconcile(context.Context, *plug.Action[*v1.Gadget]) error { return nil }
