package runtime

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

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

	// Owns lists the kinds of descendants the handler declares with
	// Action.Own. Their objects are watched (metadata only, unless a full
	// informer for the kind exists anyway) and a change to one wakes its
	// controller owner with Reconcile. Declaring a descendant of a kind not
	// listed here is an error.
	Owns []schema.GroupVersionKind

	// ReconcileEvery runs Reconcile for every object on this period after
	// it was last handled. 0 means no periodic reconcile.
	ReconcileEvery time.Duration

	// Workers is the number of objects handled at once. One object is never
	// handled by two workers at the same time. Default: Options.Workers.
	Workers int
}

// Configurer is implemented by handlers that adjust their controller's
// options, for example its workers or pipeline, before it is registered.
type Configurer[T apis.Object] interface {
	Configure(opts *ControllerOptions[T])
}

var _ = plug.Add
