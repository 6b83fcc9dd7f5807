package runtime

import (
	"context"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
)

// finalizer is the finalizer of a handler with a Delete, beside the
// pipeline's Finalizer step: it adds the finalizer to a new object ahead
// of the queue, and gives an object deleted before it had one a late
// Delete.
type finalizer[T apis.Object] struct {
	name string
	// kept: the handler has a Delete and the pipeline is the default one
	// (a ControllerOptions.Pipeline may lack the Finalizer step that
	// removes it).
	kept bool
	// late: an object deleted before it had the finalizer gets a late
	// Delete; not with controllers per version (which one would act is
	// the written version's call, and the object is gone).
	late    bool
	gk      schema.GroupKind
	objects *objects[T]
	states  *states

	mu sync.Mutex
	// gone holds the last state of objects deleted before their finalizer
	// was on them, until their late Delete succeeded (see missed).
	gone map[cache.ObjectName]T
	// deleting holds the UIDs whose Delete action started, so that the
	// watch's deletion of an object whose Delete removed the finalizer is
	// not taken for a missed one.
	deleting map[types.UID]struct{}
}

func newFinalizer[T apis.Object](kind Kind[T], h plug.Handler[T], opts ControllerOptions[T], objs *objects[T], sts *states) *finalizer[T] {
	_, deletes := h.(plug.Deleter[T])
	kept := deletes && opts.Pipeline == nil
	return &finalizer[T]{name: opts.Finalizer, kept: kept, late: kept && opts.VersionDispatch == nil, gk: kind.GVK.GroupKind(),
		objects: objs, states: sts, gone: map[cache.ObjectName]T{}, deleting: map[types.UID]struct{}{}}
}

// needed reports whether obj lacks the finalizer and would get it from its
// next action: it is not being deleted nor paused.
func (f *finalizer[T]) needed(obj T) bool {
	return f.kept && obj.GetDeletionTimestamp() == nil && !slices.Contains(obj.GetFinalizers(), f.name) && !IsPaused(obj)
}

// urgent tells the queue which keys go ahead of the others: those whose
// cached object needs the finalizer that finalizeFirst did not add yet.
func (f *finalizer[T]) urgent(key cache.ObjectName) bool {
	obj, ok := f.objects.get(key)
	if !ok || !f.needed(obj) {
		return false
	}
	st := f.states.peek(key)
	return st == nil || st.uid != string(obj.GetUID()) || !st.finalized.Load()
}

// finalizeFirst adds the finalizer to an object that needs it, on its
// own, and queues the object's first action behind the work already
// waiting: a new object is protected from its first moment in the queue
// (the queue takes such keys first), not after its first action's turn
// came. Under churn an object deleted while waiting would otherwise get
// no Delete. It reports whether it took the key.
func (c *Controller[T]) finalizeFirst(ctx context.Context, key cache.ObjectName, obj T, st *objectState) bool {
	if !c.finalizer.needed(obj) || st.finalized.Load() {
		return false
	}
	// A copy: obj is the informer's, which AddFinalizer would change
	// under the event handlers that read it (a torn slice once crashed the
	// process in GenerationOrMetadataChanged).
	wasGone, err := plug.AddFinalizer(ctx, c.env, obj.DeepCopyObject().(T))
	switch {
	case err != nil:
		c.log.Error(err, "could not add the finalizer; retrying", "namespace", key.Namespace, "name", key.Name)
		c.previewFailed(key, "add the finalizer", err)
		c.queue.Retry(key)
	case wasGone:
		c.queue.Forget(key) // the cache will show it gone
	default:
		st.finalized.Store(true)
		c.queue.Forget(key)
		if c.preview != nil {
			return false // a preview handles a key once: its first action runs now
		}
		c.queue.Add(key) // the first action, in turn
	}
	return true
}

// acting is told that an action on a starts: a Delete is remembered (see
// deleting), and a finalizer first added shows on a.Object before the
// cache shows it.
func (f *finalizer[T]) acting(a *plug.Action[T], st *objectState) {
	if a.Verb == plug.Delete {
		f.mu.Lock()
		f.deleting[a.Object.GetUID()] = struct{}{}
		f.mu.Unlock()
	}
	if st.finalized.Swap(false) && !slices.Contains(a.Object.GetFinalizers(), f.name) {
		a.Object.SetFinalizers(append(a.Object.GetFinalizers(), f.name))
	}
}

// missed reports whether the watch's deletion of last, an object's final
// state, took away an object whose Delete never ran: the object was
// deleted while its key waited in the queue (under load, or in a burst),
// before the finalizer was on it. It then gets one Delete with that
// state, a late one: a handler must not miss the deletion of an object it
// was told about. Without a Delete in the handler, with a custom pipeline
// (which decides about finalizers itself), with controllers per version
// and for paused objects, there is none.
//
// A final state that holds the finalizer is missed too: only the Delete
// takes the finalizer away, so none ran. The API server deletes such an
// object when the finalizer lands between a DELETE's check for finalizers
// and its removal from storage (the delete's retry on the changed object
// does not check again): at 2 to 8 workers, 10 to 20 of 100 Todos deleted
// right after their create went so, with no Delete.
func (f *finalizer[T]) missed(key cache.ObjectName, last T) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ran := f.deleting[last.GetUID()] // Delete ran and took the finalizer away
	if !f.late || IsPaused(last) || ran {
		delete(f.deleting, last.GetUID())
		return false
	}
	f.gone[key] = last
	return true
}

// goneObject returns the last state of an object whose late Delete is due.
func (f *finalizer[T]) goneObject(key cache.ObjectName) (T, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	last, ok := f.gone[key]
	return last, ok
}

// lateDone forgets the late Delete of last, which succeeded.
func (f *finalizer[T]) lateDone(key cache.ObjectName, last T) {
	f.mu.Lock()
	if g, ok := f.gone[key]; ok && g.GetUID() == last.GetUID() {
		delete(f.gone, key)
	}
	delete(f.deleting, last.GetUID())
	f.mu.Unlock()
}

// atCreate is the finalizer obj of kind gk needs from its creation, or
// "": needed holds but for the deletion timestamp (a new object has none).
func (f *finalizer[T]) atCreate(gk schema.GroupKind, obj metav1.Object) string {
	if f.gk != gk || !f.kept || IsPaused(obj) || slices.Contains(obj.GetFinalizers(), f.name) {
		return ""
	}
	return f.name
}

func defaultFinalizer(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return strings.ToLower(gvk.Kind) + ".opgen.dev/finalizer"
	}
	return gvk.Group + "/finalizer"
}
