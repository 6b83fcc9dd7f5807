package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/dispatch"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/lanes"
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
	return c, op.plan.addController(c)
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
	var group *dispatch.Group[VersionDispatch]
	if d := opts.VersionDispatch; d != nil {
		if err := d.check(kind.GVK.GroupKind(), kind.GVK.Version); err != nil {
			return nil, err
		}
		var err error
		if group, err = op.dispatch.Join(kind.GVK, *d, VersionDispatch.equal); err != nil {
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
		Queue:           &lanes.Queue{Urgent: (finalizing[T]{c}).urgent, Marks: &c.marks, Depth: op.metrics.Queue.LaneDepth(opts.Name, lanes.Names[:])},
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
	op.metrics.Stuck.WithLabelValues(opts.Name) // 0 until one is
	c.store = &descendantStore{op: op, controller: opts.Name, fieldManager: op.opts.Name,
		owns: map[schema.GroupVersionKind]*kindCache{}, fields: map[types.UID]declared{}, pending: map[plug.ObjectKey]pendingApply{}, ownerBucket: (shardSeam[T]{c}).bucketLabel,
		wakeOwner: func(m metav1.Object) {
			if owner, ok := c.ownerKey(m); ok {
				c.wake(owner, true)
			}
		}}
	c.env = (pipelineOf[T]{c}).env()
	c.pipeline = (pipelineOf[T]{c}).build()
	if op.shardKeys != nil {
		if err := op.metrics.Registry.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "opgen_shard_objects", Help: "Objects of the controller's kind in this member's share (its cache).",
			ConstLabels: prometheus.Labels{"controller": c.name},
		}, (shardSeam[T]{c}).shardObjects)); err != nil {
			return nil, fmt.Errorf("runtime.Register: controller %s: %w", c.name, err)
		}
	}
	return c, nil
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
	for _, ns := range c.op.opts.namespaces(c.kind.Namespaced) {
		if _, ok := c.caches[ns]; ok {
			continue
		}
		inf, err := c.newInformer(ns)
		if err != nil {
			return fmt.Errorf("runtime: controller %s: %w", c.name, err)
		}
		c.caches[ns] = inf
		if c.op.member == nil {
			c.op.seen.Add(schema.GroupResource{Group: c.kind.GVK.Group, Resource: c.kind.Resource}, ns, inf)
		}
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
