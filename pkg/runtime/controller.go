package runtime

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/cachefill"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/lanes"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Controller runs one kind's handler: a typed informer feeds keys into a
// rate-limited work queue, and workers run the pipeline for each key with
// the verb the object's state calls for (see the package documentation).
//
// It is made of parts, each built once by newController and holding what
// it needs. An event meets them in this order, and the files follow it:
// objects (informers.go), queue (internal/lanes), turns (versions.go),
// shard (shard.go), states (action.go), finalizer (finalize.go), pause
// (pause.go), hot loops (hotloop.go), then the pipeline and its environment (pipeline.go), which
// writes through the kind's client (informers.go) and the store of owned
// objects (owned.go).
type Controller[T apis.Object] struct {
	name    string
	kind    Kind[T]
	opts    ControllerOptions[T]
	op      *Operator
	handler plug.Handler[T]
	log     logr.Logger
	reconID atomic.Uint64

	objects   *objects[T]
	queue     *lanes.Keys
	turns     *versionTurn[T] // nil without ControllerOptions.VersionDispatch
	shard     *shardFilter[T] // nil without Options.Sharding
	states    *states
	finalizer *finalizer[T]
	pause     *pause[T]
	hot       *hotLoops
	owned     *ownedStore
	env       plug.Env[T]
	pipeline  plug.Pipeline[T]
	preview   *previewKeys   // nil unless Options.Preview
	keepSpec  cachefill.Spec // what the cache's fills keep of spec (CacheSpec); nil: all
}

var _ runner = (*Controller[*metav1.PartialObjectMetadata])(nil)

// newController checks opts, fills in their defaults and builds the
// controller's parts.
func newController[T apis.Object](op *Operator, kind Kind[T], h plug.Handler[T], opts ControllerOptions[T]) (*Controller[T], error) {
	opts, err := completeOptions(op, kind, opts)
	if err != nil {
		return nil, err
	}
	c := &Controller[T]{name: opts.Name, kind: kind, opts: opts, op: op, handler: h, log: op.log.WithValues("controller", opts.Name)}
	if opts.CacheSpec != nil {
		if c.keepSpec, err = cachefill.NewSpec(opts.CacheSpec); err != nil {
			return nil, fmt.Errorf("runtime.Register: controller %s: ControllerOptions.CacheSpec: %w", opts.Name, err)
		}
	}
	c.objects = &objects[T]{caches: map[string]cache.SharedIndexInformer{}}
	c.states = &states{m: map[cache.ObjectName]*objectState{}}
	if op.preview != nil {
		c.preview = &previewKeys{handled: map[cache.ObjectName]bool{}}
	}
	c.finalizer = newFinalizer(kind, h, opts, c.objects, c.states)
	c.queue = lanes.New(lanes.Config{
		Name: opts.Name, Metrics: op.metrics.Queue, Clock: op.opts.Clock, RateLimiter: opts.RateLimiter,
		Urgent: c.finalizer.urgent, Depth: op.metrics.Queue.LaneDepth(opts.Name, lanes.Names[:]), Settle: settleEchoes(&op.revisions),
	})
	if d := opts.VersionDispatch; d != nil {
		group, err := op.dispatch.Join(kind.GVK, *d, VersionDispatch.equal)
		if err != nil {
			return nil, err
		}
		c.turns = &versionTurn[T]{group: group, rule: *d, version: kind.GVK.Version, manager: op.opts.Name,
			client: kind.Client, objects: c.objects, states: c.states, queue: c.queue, log: c.log}
	}
	if s := op.sharding; s != nil {
		c.shard = &shardFilter[T]{keys: s.keys, member: s.member, objects: c.objects, namespaced: kind.Namespaced}
	}
	c.hot = &hotLoops{opts: opts.HotLoop, gvk: kind.GVK, clock: op.opts.Clock, queue: c.queue, recorder: op.recorder, bus: op.bus}
	wakeOwner := func(gvk schema.GroupVersionKind, m metav1.Object) {
		if owner, ok := kind.ownerOf(m); ok {
			c.queue.Wake(owner, woken(telemetry.TriggerOwned, objectName(gvk.Kind, m.GetNamespace(), m.GetName()), m, false))
		}
	}
	c.owned = newOwnedStore(op, opts.Name, wakeOwner, c.shard.bucketLabel)
	c.env = newEnv(op, kind, opts, h, c.objects, c.queue, c.owned)
	c.pause = &pause[T]{gvk: kind.GVK, recorder: op.recorder, env: c.env, queue: c.queue}
	c.pipeline = newPipeline(op.tracer, opts, c.env, h)
	op.metrics.Stuck.WithLabelValues(opts.Name) // 0 until one is
	if c.shard != nil {
		if err := op.metrics.Registry.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "opgen_shard_objects", Help: "Objects of the controller's kind in this member's share (its cache).",
			ConstLabels: prometheus.Labels{"controller": c.name},
		}, c.objects.count)); err != nil {
			return nil, fmt.Errorf("runtime.Register: controller %s: %w", c.name, err)
		}
	}
	return c, nil
}

// completeOptions checks opts and fills in their defaults.
func completeOptions[T apis.Object](op *Operator, kind Kind[T], opts ControllerOptions[T]) (ControllerOptions[T], error) {
	opts.Name = orDefault(opts.Name, strings.ToLower(kind.GVK.Kind))
	opts.Workers = orDefault(opts.Workers, op.opts.Workers)
	if opts.Workers < 0 || opts.ReconcileEvery < 0 {
		return opts, fmt.Errorf("runtime.Register: controller %s: Workers (%d) and ReconcileEvery (%s) must not be negative", opts.Name, opts.Workers, opts.ReconcileEvery)
	}
	for _, gvk := range opts.Retain {
		if !slices.Contains(opts.Owns, gvk) {
			return opts, fmt.Errorf("runtime.Register: controller %s: ControllerOptions.Retain names %s, which it does not own: add it to Owns (+opgen:controller:owns=%s)", opts.Name, markerKind(gvk), markerKind(gvk))
		}
	}
	if opts.Pipeline != nil && len(opts.Steps) > 0 {
		return opts, fmt.Errorf("runtime.Register: controller %s: ControllerOptions sets both Steps and Pipeline, and a Pipeline replaces the default pipeline that Steps are inserted into: put the %d steps into the pipeline that Pipeline returns, or drop Pipeline", opts.Name, len(opts.Steps))
	}
	if opts.CacheSpec != nil && opts.Project == nil {
		return opts, fmt.Errorf("runtime.Register: controller %s: ControllerOptions sets CacheSpec without Project, which is the rule of what the cache keeps: set Project to keep the same fields (the +opgen:controller:cacheSpec marker generates both), or drop CacheSpec", opts.Name)
	}
	if opts.UpdateFilter == nil {
		opts.UpdateFilter = kind.UpdateFilter
	}
	opts.HotLoop = opts.HotLoop.complete()
	if opts.ActionTimeout == 0 {
		opts.ActionTimeout = DefaultActionTimeout
	}
	if opts.RateLimiter == nil {
		opts.RateLimiter = workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]()
	}
	opts.Finalizer = orDefault(opts.Finalizer, defaultFinalizer(kind.GVK))
	if d := opts.VersionDispatch; d != nil {
		if err := d.check(kind.GVK.GroupKind(), kind.GVK.Version); err != nil {
			return opts, err
		}
		opts.UpdateFilter = dispatchFilter(opts.UpdateFilter, *d, op.opts.Name)
	}
	return opts, nil
}

// Name returns the controller's name.
func (c *Controller[T]) Name() string { return c.name }

func (c *Controller[T]) controllerName() string { return c.name }

// Get returns the cached object with key, not a copy: treat it as
// read-only. After a write of the controller's own, it returns at least
// what was written, until the cache shows it.
func (c *Controller[T]) Get(key cache.ObjectName) (T, bool) { return c.objects.get(key) }

// Enqueue asks for an action on the object with key, as someone's change
// to it would.
// Its action's triggers show a wake (telemetry.TriggerWake).
func (c *Controller[T]) Enqueue(key cache.ObjectName) {
	c.queue.Wake(key, telemetry.Trigger{Kind: telemetry.TriggerWake})
}
