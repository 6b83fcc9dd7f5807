package controller

import (
	"context"
	shopv1 "github.com/opgen-sdk/opgen/gen/testdata/golden/apis/shop/v1"
	plug "github.com/opgen-sdk/opgen/pkg/plug"
	runtime "github.com/opgen-sdk/opgen/pkg/runtime"
)

// IndexController handles Index objects (shop.example.com/v1).
//
// opgen wrote this file once and never overwrites it: it is yours. The
// generated glue (zz_generated.controllers.go) runs these methods through the
// runtime; the generated Setup registers the handler that
// NewIndexController returns.
type IndexController struct{}

// NewIndexController returns the handler of Index that the generated Setup
// registers. Give it what it needs here, from op: clients (op.Clientset()),
// and typed cache readers (NewIndexReaders(op), generated for the kinds its
// reads and owns markers name).
func NewIndexController(op *runtime.Operator) *IndexController {
	return &IndexController{}
}

// Reconcile runs for every verb but Delete, and a.Verb says why: plug.Add the
// first time the controller sees a Index (including one that existed before the
// operator started), plug.Modify when its spec (metadata.generation) changed
// since it was last handled, and plug.Reconcile when nothing changed: on the
// period that +opgen:controller:reconcileEvery sets, after a.RequeueAfter, when
// an owned object changed, and when the operator starts. To act differently on
// Add or Modify, give IndexController an Add or Modify method of the same
// signature (plug.Adder, plug.Modifier).
//
// Declare every object the Index owns with a.Own, as server-side apply
// configurations (client-go's applyconfigurations packages, or this project's
// under pkg/generated/applyconfiguration): owned objects it does not declare
// are pruned. Report progress in a.Object.Status; the pipeline writes it.
func (c *IndexController) Reconcile(ctx context.Context, a *plug.Action[*shopv1.Index]) error {
	// Declare the objects this Index should own with a.Own(...) and set
	// a.Object.Status.
	return nil
}
