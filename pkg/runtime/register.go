package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/shard"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Register adds a controller for kind, run by h, to op, and returns it for
// callers that read its cache (Controller.Get) or enqueue keys themselves.
// It must be called before op.Run. When h implements Configurer, its
// Configure method adjusts opts first. The generated glue of every kind
// calls it; a kind of your own (see Kind) calls it in main.go.
func Register[T apis.Object](op *Operator, kind Kind[T], h plug.Handler[T], opts ControllerOptions[T]) (*Controller[T], error) {
	if err := checkKind(kind, h); err != nil {
		return nil, err
	}
	if cf, ok := h.(Configurer[T]); ok {
		cf.Configure(&opts)
	}
	c, err := newController(op, kind, h, opts)
	if err != nil {
		return nil, err
	}
	return c, op.add(c)
}

func checkKind[T apis.Object](kind Kind[T], h plug.Handler[T]) error {
	switch {
	case op0(h):
		return errors.New("runtime.Register: the handler is nil")
	case kind.GVK.Kind == "" || kind.GVK.Version == "":
		return errors.New("runtime.Register: Kind.GVK is incomplete; use the Kind generated for the type")
	case kind.Resource == "":
		return fmt.Errorf("runtime.Register: Kind.Resource of %s is empty; set it to the plural resource name", kind.GVK.Kind)
	case kind.ListWatch == nil || kind.Client == nil:
		return fmt.Errorf("runtime.Register: Kind of %s lacks ListWatch or Client; use the Kind generated for the type, or package builtin for a built-in kind", kind.GVK.Kind)
	}
	return nil
}

func op0[T apis.Object](h plug.Handler[T]) bool { return h == nil }

func newController[T apis.Object](op *Operator, kind Kind[T], h plug.Handler[T], opts ControllerOptions[T]) (*Controller[T], error) {
	opts.Name = orDefault(opts.Name, strings.ToLower(kind.GVK.Kind))
	opts.Workers = orDefault(opts.Workers, op.opts.Workers)
	if opts.Workers < 0 || opts.ReconcileEvery < 0 {
		return nil, fmt.Errorf("runtime.Register: controller %s: Workers (%d) and ReconcileEvery (%s) must not be negative", opts.Name, opts.Workers, opts.ReconcileEvery)
	}
	for _, gvk := range opts.Retain {
		if !slices.Contains(opts.Owns, gvk) {
			return nil, fmt.Errorf("runtime.Register: controller %s: ControllerOptions.Retain names %s, which it does not own: add it to Owns (+opgen:controller:owns=%s)", opts.Name, markerKind(gvk), markerKind(gvk))
		}
	}
	if opts.Pipeline != nil && len(opts.Steps) > 0 {
		return nil, fmt.Errorf("runtime.Register: controller %s: ControllerOptions sets both Steps and Pipeline, and a Pipeline replaces the default pipeline that Steps are inserted into: put the %d steps into the pipeline that Pipeline returns, or drop Pipeline", opts.Name, len(opts.Steps))
	}
	if opts.UpdateFilter == nil {
		opts.UpdateFilter = kind.UpdateFilter
	}
	if opts.ActionTimeout == 0 {
		opts.ActionTimeout = DefaultActionTimeout
	}
	if opts.RateLimiter == nil {
		opts.RateLimiter = workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]()
	}
	var group *dispatchGroup
	if opts.VersionDispatch != nil {
		var err error
		if group, err = op.joinDispatch(kind.GVK, *opts.VersionDispatch); err != nil {
			return nil, err
		}
		opts.UpdateFilter = dispatchFilter(opts.UpdateFilter, *opts.VersionDispatch, op.opts.Name)
	}
	_, deletes := h.(plug.Deleter[T])
	c := &Controller[T]{
		name:      opts.Name,
		kind:      kind,
		opts:      opts,
		op:        op,
		handler:   h,
		deletes:   deletes,
		finalizer: orDefault(opts.Finalizer, defaultFinalizer(kind.GVK)),
		log:       op.log.WithValues("controller", opts.Name),
		caches:    map[string]cache.SharedIndexInformer{},
		states:    map[cache.ObjectName]*objectState{},
		gone:      map[cache.ObjectName]T{},
		deleting:  map[types.UID]struct{}{},
		dispatch:  group,
	}
	queue := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[cache.ObjectName]{
		Name:            opts.Name,
		MetricsProvider: op.metrics.Queue,
		Clock:           op.opts.Clock,
		Queue:           &laneQueue{urgent: c.urgent, marks: &c.marks},
	})
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(opts.RateLimiter, workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{
		Name:            opts.Name,
		MetricsProvider: op.metrics.Queue,
		Clock:           op.opts.Clock,
		DelayingQueue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[cache.ObjectName]{
			Name:            opts.Name,
			MetricsProvider: op.metrics.Queue,
			Clock:           op.opts.Clock,
			Queue:           queue,
		}),
	})
	c.store = &descendantStore{op: op, controller: opts.Name, fieldManager: op.opts.Name,
		owns: map[schema.GroupVersionKind]*kindCache{}, fields: map[types.UID]declared{}, pending: map[plug.ObjectKey]pendingApply{}, ownerBucket: c.bucketLabel,
		wakeOwner: func(m metav1.Object) {
			if owner, ok := c.ownerKey(m); ok {
				c.wake(owner, true)
			}
		}}
	c.env = c.newEnv()
	c.pipeline = c.buildPipeline()
	if op.shardKeys != nil {
		if err := op.metrics.Registry.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "opgen_shard_objects", Help: "Objects of the controller's kind in this member's share (its cache).",
			ConstLabels: prometheus.Labels{"controller": c.name},
		}, c.shardObjects)); err != nil {
			return nil, fmt.Errorf("runtime.Register: controller %s: %w", c.name, err)
		}
	}
	return c, nil
}

func defaultFinalizer(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return strings.ToLower(gvk.Kind) + ".opgen.dev/finalizer"
	}
	return gvk.Group + "/finalizer"
}

func (c *Controller[T]) buildPipeline() plug.Pipeline[T] {
	return traced(c.op.tracer, c.pipelineSteps())
}

func (c *Controller[T]) pipelineSteps() plug.Pipeline[T] {
	if c.opts.Pipeline != nil {
		return c.opts.Pipeline(c.env, c.handler)
	}
	p := plug.Default(c.env, c.handler)
	if len(c.opts.Steps) == 0 {
		return p
	}
	out := append(plug.Pipeline[T]{}, p[:len(p)-1]...)
	out = append(out, c.opts.Steps...)
	return append(out, p[len(p)-1])
}

// setup creates the informers of the kind and hooks up the owned and
// watched kinds. It first resolves every owned and watched kind, so an
// error that a kind is not served (meta.IsNoMatchError) leaves no handler
// behind: startCaches calls setup again once the kind's CRD is installed.
func (c *Controller[T]) setup(ctx context.Context) error {
	for _, gvk := range c.opts.Owns {
		if _, err := c.op.caches.kind(gvk, c.op.shardKeys != nil); err != nil {
			return fmt.Errorf("runtime: controller %s owns %w", c.name, err)
		}
	}
	for _, w := range c.opts.Watches {
		if w.Map == nil {
			continue // watch reports it
		}
		if _, err := c.op.caches.kind(w.Kind, false); err != nil {
			return fmt.Errorf("runtime: controller %s watches %w", c.name, err)
		}
	}
	for _, ns := range c.op.namespaces(c.kind.Namespaced) {
		if _, ok := c.caches[ns]; ok {
			continue
		}
		inf, err := c.newInformer(ns)
		if err != nil {
			return fmt.Errorf("runtime: controller %s: %w", c.name, err)
		}
		c.caches[ns] = inf
	}
	for _, gvk := range c.opts.Owns {
		if err := c.own(gvk); err != nil {
			return err
		}
	}
	for _, w := range c.opts.Watches {
		if err := c.watch(w); err != nil {
			return err
		}
	}
	return nil
}

// newInformer makes the kind's informer for ns from Kind.ListWatch, with
// the operator's transform, the controller's event handler and the watch
// telemetry (every relist is reported as telemetry.WatchRelisted).
func (c *Controller[T]) newInformer(ns string) (cache.SharedIndexInformer, error) {
	w := telemetry.Watch{Controller: c.name, GVK: c.kind.GVK, Namespace: ns}
	var inf cache.SharedIndexInformer
	if c.op.member != nil {
		// Sharded: an informer per bucket held (shard.go).
		set := shard.NewInformers(func(b int) (cache.SharedIndexInformer, error) {
			return c.kindInformer(ns, w, c.op.shardKeys.Selector(b))
		}, shard.RouteKey)
		set.Dropped = func(objs []any) {
			for _, obj := range objs {
				if key, err := cache.ObjectToName(obj); err == nil {
					c.forget(key)
				}
			}
		}
		c.op.member.Register(set)
		inf = set
	} else {
		var err error
		if inf, err = c.kindInformer(ns, w, ""); err != nil {
			return nil, err
		}
	}
	_, err := inf.AddEventHandler(c.events())
	c.op.emit(telemetry.WatchInitialized{Watch: w})
	return inf, err
}

// kindInformer makes an informer of the kind's objects in ns that match
// selector ("" for all).
func (c *Controller[T]) kindInformer(ns string, w telemetry.Watch, selector string) (cache.SharedIndexInformer, error) {
	lw := observeLists(c.kind.ListWatch(ns), c.op, w)
	lw.selector = selector
	inf := cache.NewSharedIndexInformer(lw, newObject[T](), 0, cache.Indexers{})
	if err := inf.SetTransform(c.dispatchTransform()); err != nil {
		return nil, err
	}
	return inf, observeWatch(inf, c.op, w)
}

// events enqueues adds, updates that pass the filter, and forgets deletes.
// What the initial list adds goes to the bulk lane, the rest to the user
// lane.
func (c *Controller[T]) events() cache.ResourceEventHandler {
	filter := c.opts.UpdateFilter // nil: GenerationOrMetadataChanged
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) { c.enqueue(obj, !initial) },
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(T)
			n, ok2 := newObj.(T)
			if !ok1 || !ok2 {
				return
			}
			if c.writes.seen(cache.ObjectName{Namespace: n.GetNamespace(), Name: n.GetName()}, n.GetResourceVersion()) {
				return // the controller's own write
			}
			if (filter != nil && filter(o, n)) || (filter == nil && GenerationOrMetadataChanged(o, n)) {
				c.enqueue(newObj, true)
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
			if last, ok := obj.(T); ok && c.op.member != nil {
				if b, ok := c.op.shardKeys.BucketOf(last); !ok || !c.op.member.Holds(b) {
					// It left this member's share: not a deletion.
					c.forget(key)
					return
				}
			}
			if last, ok := obj.(T); ok {
				c.writes.forget(key)
				if c.missedDelete(last) {
					c.mu.Lock()
					c.gone[key] = last
					c.mu.Unlock()
					c.wake(key, true)
				} else {
					c.mu.Lock()
					delete(c.deleting, last.GetUID())
					c.mu.Unlock()
				}
			}
			c.forget(key)
		},
	}
}

func (c *Controller[T]) enqueue(obj any, user bool) {
	if key, err := cache.ObjectToName(obj); err == nil {
		c.wake(key, user)
	}
}

// wake queues key, in the user lane when someone's change woke it.
func (c *Controller[T]) wake(key cache.ObjectName, user bool) {
	if user {
		c.marks.mark(key)
	}
	c.queue.Add(key)
}

// own watches gvk and wakes the controller owner of each changed object.
func (c *Controller[T]) own(gvk schema.GroupVersionKind) error {
	kc, err := c.op.caches.kind(gvk, c.op.shardKeys != nil)
	if err != nil {
		return fmt.Errorf("runtime: controller %s owns %w", c.name, err)
	}
	c.store.owns[gvk] = kc
	kc.stores = append(kc.stores, c.store)
	// The first reconciles judge this kind's applies by their field sets:
	// the schema they need is parsed while the caches fill.
	go c.op.schemas.Prepare(gvk)
	return c.handleAll(kc, func(m metav1.Object, deleted, initial bool) {
		key := cache.ObjectName{Namespace: m.GetNamespace(), Name: m.GetName()}
		if deleted {
			c.store.forget(plug.ObjectKey{GVK: gvk, Namespace: m.GetNamespace(), Name: m.GetName()}, m.GetUID())
		}
		owner, ok := c.ownerKey(m)
		if !ok || c.ownEvent(kc, key, m, deleted) {
			return // not ours, or the operator's own apply or prune: it wakes nobody
		}
		c.wake(owner, !initial)
	})
}

// ownerKey returns the key of the controller owner of m when it is of the
// controller's kind.
func (c *Controller[T]) ownerKey(m metav1.Object) (cache.ObjectName, bool) {
	ref := metav1.GetControllerOfNoCopy(m)
	if ref == nil {
		return cache.ObjectName{}, false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != c.kind.GVK.Group || ref.Kind != c.kind.GVK.Kind {
		return cache.ObjectName{}, false
	}
	ns := m.GetNamespace()
	if !c.kind.Namespaced {
		ns = ""
	}
	return cache.ObjectName{Namespace: ns, Name: ref.Name}, true
}

// ownEvent reports whether an event of the owned object m is the
// operator's own apply or prune. It is asked once, by the owner's
// controller.
func (c *Controller[T]) ownEvent(kc *kindCache, key cache.ObjectName, m metav1.Object, deleted bool) bool {
	if deleted {
		kc.writes.forget(key)
		_, pruned := kc.pruned.LoadAndDelete(m.GetUID())
		return pruned
	}
	return kc.writes.seen(key, m.GetResourceVersion())
}

// watch wakes the keys w.Map returns for each changed object of w.Kind.
func (c *Controller[T]) watch(w Watch) error {
	if w.Map == nil {
		return fmt.Errorf("runtime.Register: controller %s: Watch of %s has no Map function", c.name, w.Kind)
	}
	kc, err := c.op.caches.kind(w.Kind, false)
	if err != nil {
		return fmt.Errorf("runtime: controller %s watches %w", c.name, err)
	}
	return c.handleAll(kc, func(m metav1.Object, _, initial bool) {
		for _, key := range w.Map(m) {
			c.wake(key, !initial)
		}
	})
}

// handleAll calls f for every add, update (a new resourceVersion) and
// delete on kc's informers; initial tells the adds of the initial list.
func (c *Controller[T]) handleAll(kc *kindCache, f func(m metav1.Object, deleted, initial bool)) error {
	call := func(obj any, deleted, initial bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if m, err := meta.Accessor(obj); err == nil {
			f(m, deleted, initial)
		}
	}
	h := cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) { call(obj, false, initial) },
		UpdateFunc: func(oldObj, newObj any) {
			o, err1 := meta.Accessor(oldObj)
			n, err2 := meta.Accessor(newObj)
			if err1 == nil && err2 == nil && o.GetResourceVersion() != n.GetResourceVersion() {
				call(newObj, false, false)
			}
		},
		DeleteFunc: func(obj any) { call(obj, true, false) },
	}
	for _, inf := range kc.informers {
		if _, err := inf.AddEventHandler(h); err != nil {
			return err
		}
	}
	return nil
}
