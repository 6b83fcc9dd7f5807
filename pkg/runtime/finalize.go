package runtime

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
)

// finalizing adds a Delete handler's finalizer ahead of the queue.
type finalizing[T apis.Object] struct{ c *Controller[T] }

// needsFinalizer reports whether obj lacks the finalizer its kind needs
// (the handler has a Delete) and would get it from its next action: it is
// not being deleted nor paused, and the pipeline is the default one (a
// ControllerOptions.Pipeline may lack the Finalizer step that removes it).
func (s finalizing[T]) needsFinalizer(obj T) bool {
	c := s.c
	return c.deletes && c.opts.Pipeline == nil && obj.GetDeletionTimestamp() == nil &&
		!slices.Contains(obj.GetFinalizers(), c.finalizer) && !IsPaused(obj)
}

// urgent tells the queue which keys go ahead of the others: those whose
// cached object needs the finalizer that finalizeFirst did not add yet.
func (s finalizing[T]) urgent(key cache.ObjectName) bool {
	c := s.c
	obj, ok := c.Get(key)
	if !ok || !s.needsFinalizer(obj) {
		return false
	}
	c.mu.Lock()
	st := c.states[key]
	c.mu.Unlock()
	return st == nil || st.uid != string(obj.GetUID()) || !st.finalized.Load()
}

// finalizeFirst adds the finalizer to an object that needs it, on its own,
// and queues the object's first action behind the work already waiting: a
// new object is protected from its first moment in the queue (the queue
// takes such keys first), not after its first action's turn came. Under
// churn an object deleted while waiting would otherwise get no Delete. It
// reports whether it took the key.
func (s finalizing[T]) finalizeFirst(ctx context.Context, key cache.ObjectName, obj T, st *objectState) bool {
	c := s.c
	if !s.needsFinalizer(obj) || st.finalized.Load() {
		return false
	}
	// A copy: obj is the informer's, which AddFinalizer would change
	// under the event handlers that read it (a torn slice once crashed the
	// process in GenerationOrMetadataChanged).
	wasGone, err := plug.AddFinalizer(ctx, c.env, obj.DeepCopyObject().(T))
	switch {
	case err != nil:
		c.log.Error(err, "could not add the finalizer; retrying", "namespace", key.Namespace, "name", key.Name)
		c.queue.AddRateLimited(key)
	case wasGone:
		c.queue.Forget(key) // the cache will show it gone
	default:
		st.finalized.Store(true)
		c.queue.Forget(key)
		c.queue.Add(key) // the first action, in turn
	}
	return true
}

func defaultFinalizer(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return strings.ToLower(gvk.Kind) + ".opgen.dev/finalizer"
	}
	return gvk.Group + "/finalizer"
}
