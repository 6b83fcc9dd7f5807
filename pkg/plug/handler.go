package plug

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/apis"
)

// Handler is what an opgen user implements for a kind: one typed method per
// lifecycle verb. Each method receives the action, changes a.Object's status,
// declares descendants with a.Own and events with a.Normal or a.Warning, and
// returns nil, an error to retry with backoff, or Terminal(err) to stop
// retrying. The default pipeline writes what the method declared.
type Handler[T apis.Object] interface {
	// Add runs the first time the controller sees the object.
	Add(ctx context.Context, a *Action[T]) error
	// Modify runs when the object's generation (its spec) changed since
	// it was last handled successfully.
	Modify(ctx context.Context, a *Action[T]) error
	// Reconcile runs when nothing the controller handled changed: on the
	// controller's period, after a requeue, when an owned or watched object
	// changed, and for existing objects when the operator starts.
	Reconcile(ctx context.Context, a *Action[T]) error
}

// Deleter is implemented by handlers that clean up when an object is
// deleted. The runtime then keeps a finalizer on every object of the kind,
// so Delete runs even when the object was deleted while the operator was
// down, and the object goes away only after Delete returned nil. Owned
// objects need no Delete: the garbage collector removes them.
type Deleter[T apis.Object] interface {
	Delete(ctx context.Context, a *Action[T]) error
}

// HandlerFuncs adapts functions to a Handler, for tests and small
// controllers. A nil function does nothing.
type HandlerFuncs[T apis.Object] struct {
	OnAdd, OnModify, OnReconcile func(ctx context.Context, a *Action[T]) error
}

// Add calls OnAdd.
func (h HandlerFuncs[T]) Add(ctx context.Context, a *Action[T]) error { return call(h.OnAdd, ctx, a) }

// Modify calls OnModify.
func (h HandlerFuncs[T]) Modify(ctx context.Context, a *Action[T]) error {
	return call(h.OnModify, ctx, a)
}

// Reconcile calls OnReconcile.
func (h HandlerFuncs[T]) Reconcile(ctx context.Context, a *Action[T]) error {
	return call(h.OnReconcile, ctx, a)
}

var _ Handler[*metav1.PartialObjectMetadata] = HandlerFuncs[*metav1.PartialObjectMetadata]{}

func call[T apis.Object](f func(context.Context, *Action[T]) error, ctx context.Context, a *Action[T]) error {
	if f == nil {
		return nil
	}
	return f(ctx, a)
}
