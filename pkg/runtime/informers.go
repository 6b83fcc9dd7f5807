package runtime

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/cachefill"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/lanes"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/observe"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/ownwrites"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/shard"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// objects are the kind's objects as the controller's informers cache
// them, with what its own writes returned over them until the cache
// shows them (internal/ownwrites).
type objects[T apis.Object] struct {
	caches map[string]cache.SharedIndexInformer // by namespace; "" = all
	// started holds the informers once synced, for readers beside the
	// workers (the metrics).
	started atomic.Pointer[[]cache.SharedIndexInformer]
	writes  ownwrites.Writes[T]
}

// get returns the cached object with key, or the controller's newer
// write of it.
func (o *objects[T]) get(key cache.ObjectName) (T, bool) {
	var zero T
	inf := o.caches[AllNamespaces]
	if inf == nil {
		inf = o.caches[key.Namespace]
	}
	if inf == nil {
		return zero, false
	}
	obj, _, err := inf.GetIndexer().GetByKey(key.String())
	if err != nil {
		return zero, false
	}
	t, ok := obj.(T)
	return o.writes.Read(key, t, ok)
}

func (o *objects[T]) informers() []cache.SharedIndexInformer {
	out := make([]cache.SharedIndexInformer, 0, len(o.caches))
	for _, inf := range o.caches {
		out = append(out, inf)
	}
	return out
}

// count reports the objects cached: a sharded member's share. The metrics
// are served before the caches are set up, so it reads the informers
// watchesStarted published, not caches.
func (o *objects[T]) count() float64 {
	infs := o.started.Load()
	if infs == nil {
		return 0
	}
	n := 0
	for _, inf := range *infs {
		n += len(inf.GetStore().ListKeys())
	}
	return float64(n)
}

func (c *Controller[T]) informers() []cache.SharedIndexInformer { return c.objects.informers() }

// newInformer makes the kind's informer for ns from Kind.ListWatch, with
// the operator's transform, the controller's event handler and the watch
// telemetry (every relist is reported as telemetry.WatchRelisted).
func (c *Controller[T]) newInformer(ns string) (cache.SharedIndexInformer, error) {
	w := telemetry.Watch{Controller: c.name, GVK: c.kind.GVK, Namespace: ns}
	var inf cache.SharedIndexInformer
	if s := c.op.sharding; s != nil {
		// Sharded: an informer per bucket held (shard.go).
		set := shard.NewInformers(func(b int) (cache.SharedIndexInformer, error) {
			return c.kindInformer(ns, w, s.keys.Share(b))
		}, s.keys.Route())
		set.Dropped = func(objs []any) {
			for _, obj := range objs {
				if key, err := cache.ObjectToName(obj); err == nil {
					c.states.forget(key)
				}
			}
		}
		s.member.Register(set)
		inf = set
	} else {
		var err error
		if inf, err = c.kindInformer(ns, w, shard.Share{}); err != nil {
			return nil, err
		}
	}
	err := c.op.caches.handle(inf, c.events())
	c.op.bus.Emit(telemetry.WatchInitialized{Watch: w})
	return inf, err
}

// kindInformer makes an informer of the kind's objects in ns in share
// (all for the zero Share).
func (c *Controller[T]) kindInformer(ns string, w telemetry.Watch, share shard.Share) (cache.SharedIndexInformer, error) {
	lw := observe.ObserveLists(keepSpec(c.kind.ListWatch(ns), c.keepSpec), w, c.op.bus.Emit, &c.op.relists)
	lw.Selector, lw.ShardSelector = share.Label, share.Server
	lw.Transform = dispatchTransform(c.opts.VersionDispatch, c.op, projection(c.opts.Project))
	inf := cache.NewSharedIndexInformer(lw, newObject[T](), 0, cache.Indexers{})
	return inf, observeWatch(inf, c.op, w)
}

// keepSpec returns lw, whose lists and watches keep of each object's spec
// only what keep does (ControllerOptions.CacheSpec), or lw for a nil keep.
func keepSpec(lw *cache.ListWatch, keep cachefill.Spec) *cache.ListWatch {
	if keep == nil || lw.ListWithContextFunc == nil || lw.WatchFuncWithContext == nil {
		return lw // a ListWatch without contexts: decoded whole, then projected
	}
	list, watchFn := lw.ListWithContextFunc, lw.WatchFuncWithContext
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (k8sruntime.Object, error) {
			return list(cachefill.KeepSpec(ctx, keep), opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return watchFn(cachefill.KeepSpec(ctx, keep), opts)
		},
		DisableChunking: lw.DisableChunking,
	}
}

// projection is ControllerOptions.Project for the cache's transform, or
// nil.
func projection[T apis.Object](project func(T)) func(any) {
	if project == nil {
		return nil
	}
	return func(obj any) {
		if o, ok := obj.(T); ok {
			project(o)
		}
	}
}

// events turns the informer's events into keys: adds, updates that pass
// the filter, and deletes. What the initial list adds goes to the bulk
// lane, the rest to the user lane.
func (c *Controller[T]) events() cache.ResourceEventHandler {
	filter := c.opts.UpdateFilter // nil: GenerationOrMetadataChanged
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if m := accessor(obj); m != nil {
				key := cache.ObjectName{Namespace: m.GetNamespace(), Name: m.GetName()}
				c.queue.Wake(key, woken(telemetry.TriggerChange, "", m, initial))
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(T)
			n, ok2 := newObj.(T)
			if !ok1 || !ok2 {
				return
			}
			key := cache.ObjectName{Namespace: n.GetNamespace(), Name: n.GetName()}
			if c.objects.writes.Seen(key, n.GetResourceVersion()) {
				return // the controller's own write
			}
			if (filter != nil && filter(o, n)) || (filter == nil && GenerationOrMetadataChanged(o, n)) {
				c.queue.WakeUpdate(key, update(telemetry.TriggerChange, "", o, n))
			}
		},
		DeleteFunc: func(obj any) {
			key, err := cache.DeletionHandlingObjectToName(obj)
			if err != nil {
				return
			}
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			last, ok := obj.(T)
			switch {
			case ok && c.shard != nil && !c.shard.holds(last):
				// It left this member's share: not a deletion.
			case ok:
				c.objects.writes.Forget(key)
				if c.finalizer.missed(key, last) {
					c.queue.Wake(key, woken(telemetry.TriggerChange, "", last, false))
				}
			}
			c.states.forget(key)
		},
	}
}

// watchesStarted publishes the informers once synced and emits
// WatchStarted for each, in namespace order.
func (c *Controller[T]) watchesStarted() {
	infs := c.objects.informers()
	c.objects.started.Store(&infs)
	for _, ns := range slices.Sorted(maps.Keys(c.objects.caches)) {
		c.op.bus.Emit(telemetry.WatchStarted{Watch: telemetry.Watch{Controller: c.name, GVK: c.kind.GVK, Namespace: ns}})
	}
}

// observeWatch reports the informer's watch failures (WatchFailed), in
// place of client-go's logging of them;
// Operator.startCaches reports WatchStarted once every cache synced.
func observeWatch(inf cache.SharedIndexInformer, op *Operator, w telemetry.Watch) error {
	return inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		// Logged (at a bounded rate) by the operator's telemetry logger,
		// not again by client-go's default handler.
		op.relists.Failed(w, err)
		op.bus.Emit(telemetry.WatchFailed{Watch: w, Err: err})
	})
}

// newObject returns a new, empty T (T is a pointer to a struct).
func newObject[T apis.Object]() T {
	return reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
}

// GenerationOrMetadataChanged enqueues an update when the generation, the deletion
// timestamp, the finalizers, the labels or the annotations changed: what a
// handler acts on, and never the operator's own status writes.
func GenerationOrMetadataChanged(oldObj, newObj metav1.Object) bool {
	return oldObj.GetGeneration() != newObj.GetGeneration() ||
		(oldObj.GetDeletionTimestamp() == nil) != (newObj.GetDeletionTimestamp() == nil) ||
		!slices.Equal(oldObj.GetFinalizers(), newObj.GetFinalizers()) ||
		!maps.Equal(oldObj.GetLabels(), newObj.GetLabels()) ||
		!maps.Equal(oldObj.GetAnnotations(), newObj.GetAnnotations()) ||
		oldObj.GetUID() != newObj.GetUID()
}

// AnyChange enqueues every update that changed the object (a new
// resourceVersion), status included. It is the default for built-in kinds
// (package builtin), whose status the cluster writes and a handler watches
// (a pod printer wants to see a Pod turn Running); the operator writes no
// status to them unless its handler changes it.
func AnyChange(oldObj, newObj metav1.Object) bool {
	return oldObj.GetResourceVersion() != newObj.GetResourceVersion()
}

// kindClient is the kind's client as the steps write through it. It
// remembers what each patch returned until the cache shows it
// (internal/ownwrites), and counts each successful patch: of the status
// subresource as "status", of the object itself (the Finalizer step's
// only write) as "finalizer".
type kindClient[T apis.Object] struct {
	plug.Client[T]
	namespace string
	writes    *ownwrites.Writes[T]
	queue     *lanes.Keys // wakes a key whose write a concurrent event hid
	revisions *ownwrites.Revisions
	count     func(what string)
}

func (c kindClient[T]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error) {
	key := cache.ObjectName{Namespace: c.namespace, Name: name}
	c.writes.Begin(key)
	obj, err := c.Client.Patch(ctx, name, pt, data, opts, subresources...)
	if woken := c.writes.EndWoken(key, obj, err == nil, ""); woken != nil {
		// A change came while the patch was on its way.
		c.queue.Wake(key, changeAt(c.revisions, woken))
	}
	if err == nil {
		what := "finalizer"
		if len(subresources) > 0 && subresources[0] == "status" {
			what = "status"
		}
		c.count(what)
	}
	return obj, err
}

// clients returns the kind's clients by namespace, as the steps write
// through them.
func (o *objects[T]) clients(kind Kind[T], queue *lanes.Keys, revisions *ownwrites.Revisions, count func(what string)) func(namespace string) plug.Client[T] {
	return func(ns string) plug.Client[T] {
		return kindClient[T]{Client: kind.Client(ns), namespace: ns, writes: &o.writes, queue: queue, revisions: revisions, count: count}
	}
}
