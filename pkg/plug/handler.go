package plug

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/apis"
)

// Handler is what an opgen user implements for a kind. Reconcile is the
// only method a handler must have: it runs for every verb but Delete, with
// a.Verb saying why (Add, Modify or Reconcile), unless the handler also
// implements Adder or Modifier for that verb. It changes a.Object's status,
// declares owned objects with a.Own and events with a.Normal or a.Warning,
// and returns nil, an error to retry with backoff, or Terminal(err) to stop
// retrying. The default pipeline writes what it declared.
//
// Reconcile runs on its own, with a.Verb == Reconcile, when nothing the
// controller handled changed: on the controller's period, after a
// requeue, when an owned or watched object changed, and for existing
// objects when the operator starts. Like Add and Modify it declares the
// full desired state, so the desired state is written in one place.
type Handler[T apis.Object] interface {
	Reconcile(ctx context.Context, a *Action[T]) error
}

// Adder is implemented by handlers that do something else the first time
// the controller sees an object; without it, Reconcile runs with a.Verb ==
// Add.
type Adder[T apis.Object] interface {
	// Add runs the first time the controller sees the object.
	Add(ctx context.Context, a *Action[T]) error
}

// Modifier is implemented by handlers that do something else when the
// object's generation (its spec) changed since it was last handled
// successfully; without it, Reconcile runs with a.Verb == Modify.
type Modifier[T apis.Object] interface {
	Modify(ctx context.Context, a *Action[T]) error
}

// Deleter is implemented by handlers that clean up when an object is
// deleted. The runtime then keeps a finalizer on every object of the kind,
// so Delete runs even when the object was deleted while the operator was
// down, and the object goes away only after Delete returned nil. Owned
// objects need no Delete: the garbage collector removes them. Reconcile
// never runs for a deletion.
type Deleter[T apis.Object] interface {
	Delete(ctx context.Context, a *Action[T]) error
}

// HandlerFuncs adapts functions to a Handler, for tests and small
// controllers. OnReconcile runs for every verb but Delete, unless OnAdd or
// OnModify is set for its verb; a nil function does nothing. It never
// implements Deleter (that would keep a finalizer on every object): a
// handler that cleans up on deletion is a type with a Delete method.
type HandlerFuncs[T apis.Object] struct {
	OnAdd, OnModify, OnReconcile func(ctx context.Context, a *Action[T]) error
}

// Reconcile calls OnAdd or OnModify when set for a.Verb, else OnReconcile.
func (h HandlerFuncs[T]) Reconcile(ctx context.Context, a *Action[T]) error {
	switch {
	case a.Verb == Add && h.OnAdd != nil:
		return h.OnAdd(ctx, a)
	case a.Verb == Modify && h.OnModify != nil:
		return h.OnModify(ctx, a)
	case h.OnReconcile != nil:
		return h.OnReconcile(ctx, a)
	}
	return nil
}

var _ Handler[*metav1.PartialObjectMetadata] = HandlerFuncs[*metav1.PartialObjectMetadata]{}
