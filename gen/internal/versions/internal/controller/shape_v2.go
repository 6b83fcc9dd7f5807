package controller

import (
	"context"
	"time"

	shapesv2 "github.com/opgen-sdk/opgen/gen/internal/versions/apis/shapes/v2"
	plug "github.com/opgen-sdk/opgen/pkg/plug"
	runtime "github.com/opgen-sdk/opgen/pkg/runtime"
)

// ShapeV2Controller handles Shape objects (shapes.opgen.dev/v2).
//
// opgen wrote this file once and never overwrites it: it is yours. The
// generated glue (zz_generated.controllers.go) runs these methods through the
// runtime; the generated Setup registers the handler that
// NewShapeV2Controller returns.
type ShapeV2Controller struct{}

// NewShapeV2Controller returns the handler of Shape that the generated Setup
// registers. Give it what it needs here, from op: clients (op.Clientset()),
// and typed cache readers (NewShapeV2Readers(op), generated for the kinds its
// reads and owns markers name).
func NewShapeV2Controller(op *runtime.Operator) *ShapeV2Controller {
	return &ShapeV2Controller{}
}

// Reconcile runs for every verb but Delete, and a.Verb says why: plug.Add the
// first time the controller sees a Shape (including one that existed before the
// operator started), plug.Modify when its spec (metadata.generation) changed
// since it was last handled, and plug.Reconcile when nothing changed: on the
// period that +opgen:controller:reconcileEvery sets, after a.RequeueAfter, when
// an owned object changed, and when the operator starts. To act differently on
// Add or Modify, give ShapeV2Controller an Add or Modify method of the same
// signature (plug.Adder, plug.Modifier).
//
// Declare every object the Shape owns with a.Own, as server-side apply
// configurations (client-go's applyconfigurations packages, or this project's
// under pkg/generated/applyconfiguration): owned objects it does not declare
// are pruned. Report progress in a.Object.Status; the pipeline writes it.
func (c *ShapeV2Controller) Reconcile(ctx context.Context, a *plug.Action[*shapesv2.Shape]) error {
	defer Actions.enter(Handled{"v2", a.Object.Name, a.Verb, a.Object.Generation})()
	time.Sleep(20 * time.Millisecond) // long enough for a second controller entering at once to be seen
	return nil
}

// Delete runs behind the finalizer, in the version that owns the object.
func (c *ShapeV2Controller) Delete(ctx context.Context, a *plug.Action[*shapesv2.Shape]) error {
	return c.Reconcile(ctx, a)
}
