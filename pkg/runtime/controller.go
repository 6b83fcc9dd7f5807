package runtime

import (
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/dispatch"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/lanes"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/ownwrites"
)

// Controller runs one kind's handler: a typed informer feeds keys into a
// rate-limited work queue, and workers run the pipeline for each key with
// the verb the object's state calls for (see the package documentation).
type Controller[T apis.Object] struct {
	name      string
	kind      Kind[T]
	opts      ControllerOptions[T]
	op        *Operator
	handler   plug.Handler[T]
	finalizer string
	deletes   bool
	env       plug.Env[T]
	pipeline  plug.Pipeline[T]
	log       logr.Logger

	caches map[string]cache.SharedIndexInformer // by namespace; "" = all
	// started holds the informers once synced, for readers beside the
	// workers (the metrics).
	started atomic.Pointer[[]cache.SharedIndexInformer]
	queue   workqueue.TypedRateLimitingInterface[cache.ObjectName]
	marks   lanes.Marks // keys woken by someone's change (internal/lanes)
	// writes holds what the controller's own writes to its objects
	// returned until the cache shows them (internal/ownwrites).
	writes  ownwrites.Writes[T]
	store   *descendantStore
	reconID atomic.Uint64
	// dispatch is shared with the controllers of the kind's other
	// versions (ControllerOptions.VersionDispatch), or nil.
	dispatch *dispatch.Group[VersionDispatch]

	mu     sync.Mutex
	states map[cache.ObjectName]*objectState
	// gone holds the last state of objects deleted before their finalizer
	// was on them, until their late Delete succeeded (see missedDelete).
	gone map[cache.ObjectName]T
	// deleting holds the UIDs whose Delete action started, so that the
	// watch's deletion of an object whose Delete removed the finalizer is
	// not taken for a missed one.
	deleting map[types.UID]struct{}
}

var _ runner = (*Controller[*metav1.PartialObjectMetadata])(nil)

// objectState is what the controller remembers of one object while it
// exists: the generation it last handled successfully in this process and
// the steps' memory.
type objectState struct {
	uid     string
	handled int64
	known   bool
	memory  plug.Memory // holds no map while no step remembers anything
	// finalized: finalizeFirst added the finalizer and the object's first
	// action has not run yet. Read by the queue (urgent) under its lock.
	finalized atomic.Bool
}

// Name returns the controller's name.
func (c *Controller[T]) Name() string { return c.name }

func (c *Controller[T]) controllerName() string { return c.name }

// Get returns the cached object with key, not a copy: treat it as
// read-only. After a write of the controller's own, it returns at least
// what was written, until the cache shows it.
func (c *Controller[T]) Get(key cache.ObjectName) (T, bool) {
	var zero T
	inf := c.caches[AllNamespaces]
	if inf == nil {
		inf = c.caches[key.Namespace]
	}
	if inf == nil {
		return zero, false
	}
	obj, _, err := inf.GetIndexer().GetByKey(key.String())
	if err != nil {
		return zero, false
	}
	t, ok := obj.(T)
	return c.writes.Read(key, t, ok)
}

// Enqueue asks for an action on the object with key, as someone's change
// to it would.
func (c *Controller[T]) Enqueue(key cache.ObjectName) { c.wake(key, true) }

func (c *Controller[T]) informers() []cache.SharedIndexInformer {
	out := make([]cache.SharedIndexInformer, 0, len(c.caches))
	for _, inf := range c.caches {
		out = append(out, inf)
	}
	return out
}

// The seams below are the concepts a controller holds beside its loop,
// each a small type over the controller, so that Controller's own methods
// are its loop's.
