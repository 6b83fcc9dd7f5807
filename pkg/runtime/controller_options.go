package runtime

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
)

// ControllerOptions configure one typed controller. opgen's generated glue
// fills them from the kind's +opgen:controller markers; a handler may change
// them by implementing Configurer.
type ControllerOptions[T apis.Object] struct {
	// Name identifies the controller in logs, metrics and events.
	// Default: the lower-case kind.
	Name string

	// Owns lists the kinds of owned objects the handler declares with
	// Action.Own. Their objects are watched (metadata only, unless a full
	// informer for the kind exists anyway) and a change to one wakes its
	// controller owner with Reconcile. Declaring an owned object of a kind not
	// listed here is an error.
	Owns []schema.GroupVersionKind

	// Retain are owned kinds whose objects the handler does not declare
	// again are kept, not pruned: owned objects that accumulate, such as the
	// Jobs of scheduled runs. The handler deletes old ones itself
	// (plug.DeleteNow); the garbage collector removes them with their
	// owner. An action may decide otherwise (Action.SetPrunePolicy). Each
	// must be one of Owns.
	Retain []schema.GroupVersionKind

	// ReconcileEvery runs Reconcile for every object on this period after
	// it was last handled. 0 means no periodic reconcile.
	ReconcileEvery time.Duration

	// Workers is the number of objects handled at once. One object is never
	// handled by two workers at the same time. Default: Options.Workers.
	Workers int

	// ActionTimeout bounds one action. At the deadline its context is
	// cancelled, opgen_reconcile_timeouts_total counts it and a log line
	// names the key; the action fails and is retried with backoff. A
	// handler that still runs ActionTimeout/10 later (at least a second)
	// ignores its context: it is logged once, opgen_reconcile_stuck and
	// /readyz show it until it returns (Options.StuckHandlersFailReady),
	// and its worker waits for it, since no other worker may take the key
	// meanwhile. The context's cause (context.Cause) says which timeout
	// ended it. Default DefaultActionTimeout; negative: none.
	ActionTimeout time.Duration

	// HotLoop says when an object handled again and again by nothing but
	// the operator's own writes is in a hot loop (see HotLoopOptions).
	HotLoop HotLoopOptions

	// Watches wake objects of this controller when objects of other kinds
	// change, through a mapping function.
	Watches []Watch

	// Finalizer names the finalizer kept on objects when the handler
	// implements plug.Deleter. Default: "<group>/finalizer" (for the core
	// group, "<name>.opgen.dev/finalizer").
	Finalizer string

	// Project, when set, runs on every object of the kind as it enters the
	// controller's cache and keeps there only what it leaves: it zeroes the
	// spec fields no handler reads, so that the cache holds less. The
	// handler's methods, Delete included, see the projected objects.
	// It must leave ObjectMeta and Status as they are (the pipeline reads
	// both), and a handler must not Update an object it read from the
	// cache (the update would clear what was projected away): write with
	// apply configurations, which send only the fields set, or Get the
	// object live first. The +opgen:controller:cacheSpec marker generates
	// it. Default: nil, the whole object is cached.
	Project func(T)

	// CacheSpec names, as dotted paths of JSON names below spec
	// ("image", "template.metadata"), the spec fields Project keeps.
	// With it the operator drops the other spec fields from the JSON of
	// the cache's lists and watches before it decodes them, so that what
	// Project would zero is never decoded. Project still runs after the
	// decode (an answer in protobuf is decoded whole) and stays the rule:
	// a field CacheSpec does not name reaches Project zero, so name every
	// field it keeps. An empty, non-nil CacheSpec keeps none of spec.
	// Requires Project. The +opgen:controller:cacheSpec marker sets both.
	// Default: nil, spec is decoded whole.
	CacheSpec []string

	// UpdateFilter decides whether an update seen by the informer enqueues
	// the object. Default: GenerationOrMetadataChanged (generation, deletion,
	// finalizers, labels or annotations changed). Status-only changes are
	// ignored by default, so the operator's own status writes do not wake
	// it.
	UpdateFilter func(oldObj, newObj T) bool

	// Steps are inserted into the default pipeline just before Delegate,
	// in order: they see the action before the handler and its result
	// after it, inside the writing steps. Not together with Pipeline.
	Steps []plug.Step[T]

	// Pipeline, when set, builds the whole pipeline instead of
	// plug.Default; env carries what the built-in steps need. Setting it
	// together with Steps is an error: the steps belong in the pipeline
	// it returns.
	Pipeline func(env plug.Env[T], h plug.Handler[T]) plug.Pipeline[T]

	// VersionDispatch, when set, shares the kind's objects with the controllers
	// of its other API versions on the same operator: this controller
	// handles only the objects the rule sends to its version (see
	// VersionDispatch). Every version's controller must carry the same.
	VersionDispatch *VersionDispatch

	// RateLimiter paces retries of failed keys. Default: client-go's
	// controller rate limiter: per-key exponential backoff from 5ms to
	// 1000s, within an overall 10 qps (burst 100).
	RateLimiter workqueue.TypedRateLimiter[cache.ObjectName]
}

// Watch wakes a controller's objects when objects of another kind change.
// The kind is watched metadata-only (labels, annotations, owner references
// are there), shared with every other watch of it in the operator.
type Watch struct {
	// Kind is the watched kind.
	Kind schema.GroupVersionKind
	// Map returns the keys of the controller's objects to run Reconcile
	// for (cache.ObjectName{Namespace, Name}) when obj is added, changed
	// or deleted.
	Map func(obj metav1.Object) []cache.ObjectName
}

// Configurer is implemented by handlers that adjust their controller's
// options, for example its workers or pipeline, before it is registered.
type Configurer[T apis.Object] interface {
	Configure(opts *ControllerOptions[T])
}
