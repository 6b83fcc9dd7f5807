package runtime

import (
	"slices"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
)

// verb picks the verb for obj from its state, never from the event that
// woke the controller; act is false when there is nothing to do. The rules
// are the package documentation's "Verbs".
func (c *Controller[T]) verb(obj T, st *objectState) (v plug.Verb, act bool) {
	if obj.GetDeletionTimestamp() != nil {
		return plug.Delete, slices.Contains(obj.GetFinalizers(), c.finalizer)
	}
	handled, known := lastHandled(obj, st)
	switch {
	case !known:
		return plug.Add, true
	case handled != obj.GetGeneration():
		return plug.Modify, true
	default:
		return plug.Reconcile, true
	}
}

// lastHandled is the generation last handled successfully: this process's
// memory first (it is never older than the status, which the cache may not
// show yet), then status.observedGeneration.
func lastHandled[T apis.Object](obj T, st *objectState) (int64, bool) {
	if st.known {
		return st.handled, true
	}
	if og, ok := any(obj).(apis.ObservedGenerationObject); ok && og.GetObservedGeneration() > 0 {
		return og.GetObservedGeneration(), true
	}
	return 0, false
}
