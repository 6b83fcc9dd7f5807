package runtime

import (
	"context"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/opgen-sdk/opgen/pkg/internal/runtimehooks"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/observe"
)

// What opgen's own packages ask of an operator, and not its users, goes
// through package runtimehooks: the webhook server, the test kit, a host
// of the operator and a fleet's main.
func init() {
	runtimehooks.Set(runtimehooks.Hooks[*Operator]{
		FinalizerAtCreate: finalizerAtCreate,
		Seen: func(o *Operator, gr schema.GroupResource, obj metav1.Object) bool {
			return o.seen.Seen(gr, obj.GetNamespace(), obj.GetName(), obj.GetResourceVersion(), obj.GetUID())
		},
		CheckHealth: func(o *Operator, r *http.Request) error {
			_, err := o.checks.Health(r)
			return err
		},
		RunAgain: runAgain,
	})
}

// createFinalizer is implemented by the controllers whose objects should
// carry a finalizer from their creation.
type createFinalizer interface {
	finalizerAtCreate(gk schema.GroupKind, obj metav1.Object) string
}

// finalizerAtCreate returns the finalizer a new object of kind gk should
// carry from its creation, or "" for none: the finalizer of a controller
// of that kind (in any version) whose handler implements Delete with the
// default pipeline, unless obj is paused or has it already. A defaulting
// admission webhook (pkg/webhook) adds it to the object it admits on
// create, so that an object deleted before the operator's first action
// still gets its Delete; without a webhook the runtime adds it ahead of
// all queued work (see plug.AddFinalizer). Safe for concurrent use once
// the controllers are registered.
func finalizerAtCreate(o *Operator, gk schema.GroupKind, obj metav1.Object) string {
	o.plan.mu.Lock()
	controllers := o.plan.controllers
	o.plan.mu.Unlock()
	for _, r := range controllers {
		if c, ok := r.(createFinalizer); ok {
			if f := c.finalizerAtCreate(gk, obj); f != "" {
				return f
			}
		}
	}
	return ""
}

func (c *Controller[T]) finalizerAtCreate(gk schema.GroupKind, obj metav1.Object) string {
	return c.finalizer.atCreate(gk, obj)
}

// FinalizerAtCreate returns the finalizer a new object of kind gk should
// carry from its creation, or "" for none.
//
// Deprecated: it served opgen's webhook server, which no longer calls it;
// it goes in a later release.
func (o *Operator) FinalizerAtCreate(gk schema.GroupKind, obj metav1.Object) string {
	return finalizerAtCreate(o, gk, obj)
}

// Seen reports whether the operator's caches of resource gr have seen a
// write someone made of obj, as its answer shows it.
//
// Deprecated: it served the test kit, whose Kit.WaitSeen is the way to
// wait for the operator to see a write; it goes in a later release.
func (o *Operator) Seen(gr schema.GroupResource, obj metav1.Object) bool {
	return runtimehooks.Of[*Operator]().Seen(o, gr, obj)
}

// CheckHealth returns what /healthz answers.
//
// Deprecated: it served package ctrlbridge, which no longer calls it; it
// goes in a later release.
func (o *Operator) CheckHealth(r *http.Request) error {
	return runtimehooks.Of[*Operator]().CheckHealth(o, r)
}

// RunAgain reports whether Main runs the operator again after its Run
// returned err.
//
// Deprecated: it served fleet.Main, which no longer calls it; it goes in
// a later release.
func RunAgain(ctx context.Context, op *Operator, err error) bool { return runAgain(ctx, op, err) }

// Span names and attributes of the spans an action makes when
// Options.TracerProvider is set: "opgen.reconcile" per action, with a
// child "opgen.step <name>" per pipeline step (docs/runtime.md).
//
// Deprecated: the names are documented in docs/runtime.md; the constants
// go in a later release.
const (
	// Deprecated: the span is "opgen.reconcile".
	SpanReconcile = observe.SpanReconcile
	// Deprecated: the spans are "opgen.step <name>".
	SpanStep = observe.SpanStep
	// Deprecated: the attribute is "opgen.controller".
	AttrController = observe.AttrController
	// Deprecated: the attribute is "k8s.namespace.name".
	AttrNamespace = observe.AttrNamespace
	// Deprecated: the attribute is "opgen.object.name".
	AttrName = observe.AttrName
	// Deprecated: the attribute is "opgen.verb".
	AttrVerb = observe.AttrVerb
	// Deprecated: the attribute is "opgen.reconcile_id".
	AttrID = observe.AttrID
	// Deprecated: the attribute is "opgen.step".
	AttrStep = observe.AttrStep
)
