package controller

import (
	"context"
	shopv1 "github.com/opgen-sdk/opgen/gen/testdata/golden/apis/shop/v1"
	plug "github.com/opgen-sdk/opgen/pkg/plug"
	runtime "github.com/opgen-sdk/opgen/pkg/runtime"
)

// OrderController handles Order objects (shop.example.com/v1).
//
// opgen wrote this file once and never overwrites it: it is yours. The
// generated glue (zz_generated.controllers.go) runs these methods through the
// runtime; the generated Setup registers the handler that
// NewOrderController returns.
type OrderController struct{}

// NewOrderController returns the handler of Order that the generated Setup
// registers. Give it what it needs here, from op: clients (op.Clientset()),
// and typed cache readers (NewOrderReaders(op), generated for the kinds its
// reads and owns markers name).
func NewOrderController(op *runtime.Operator) *OrderController {
	return &OrderController{}
}

// Add runs the first time the controller sees a Order, including one that
// existed before the operator started and was never handled.
//
// Declare every object the Order owns with a.Own, as server-side apply
// configurations (client-go's applyconfigurations packages, or this project's
// under pkg/generated/applyconfiguration): owned objects that an Add, Modify or
// Reconcile does not declare are pruned. Report progress in a.Object.Status;
// the pipeline writes it.
func (c *OrderController) Add(ctx context.Context, a *plug.Action[*shopv1.Order]) error {
	return c.Reconcile(ctx, a)
}

// Modify runs when the Order's spec (its metadata.generation) changed since it
// was last handled successfully. Like Add, it declares the full set of owned
// objects.
func (c *OrderController) Modify(ctx context.Context, a *plug.Action[*shopv1.Order]) error {
	return c.Reconcile(ctx, a)
}

// Reconcile runs when nothing the controller handled changed: on the period
// that +opgen:controller:reconcileEvery sets, after a.RequeueAfter, when an
// owned object changed, and for every Order when the operator starts. It
// declares the full set of owned objects too; Add and Modify call it, so the
// desired state is written in one place.
func (c *OrderController) Reconcile(ctx context.Context, a *plug.Action[*shopv1.Order]) error {
	// Declare the objects this Order should own with a.Own(...) and set
	// a.Object.Status.
	return nil
}

// Delete runs when a Order is being deleted. Because this method exists, the
// runtime keeps a finalizer on every Order: Delete runs even when the operator
// was down during the deletion, and the Order goes away only once Delete
// returned nil. Owned objects need no cleanup here, the garbage collector
// deletes them; when that is all there is to do, remove this method and the
// runtime adds no finalizer.
func (c *OrderController) Delete(ctx context.Context, a *plug.Action[*shopv1.Order]) error {
	return nil
}
