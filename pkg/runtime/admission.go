package runtime

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// createFinalizer is implemented by the controllers whose objects should
// carry a finalizer from their creation.
type createFinalizer interface {
	finalizerAtCreate(gk schema.GroupKind, obj metav1.Object) string
}

// FinalizerAtCreate returns the finalizer a new object of kind gk should
// carry from its creation, or "" for none: the finalizer of a controller
// of that kind (in any version) whose handler implements Delete with the
// default pipeline, unless obj is paused or has it already. A defaulting
// admission webhook (pkg/webhook) adds it to the object it admits on
// create, so that an object deleted before the operator's first action
// still gets its Delete; without a webhook the runtime adds it ahead of
// all queued work (see plug.AddFinalizer). Safe for concurrent use once
// the controllers are registered.
func (o *Operator) FinalizerAtCreate(gk schema.GroupKind, obj metav1.Object) string {
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
