package runtime

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// observeWatch reports the informer's watch failures (WatchFailed);
// Operator.startCaches reports WatchStarted once every cache synced.
func observeWatch(inf cache.SharedIndexInformer, op *Operator, w telemetry.Watch) error {
	return inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		op.emit(telemetry.WatchFailed{Watch: w, Err: err})
		cache.DefaultWatchErrorHandler(ctx, r, err)
	})
}

// watchesStarted emits WatchStarted for each of the controller's
// informers, in namespace order.
func (c *Controller[T]) watchesStarted() {
	for _, ns := range slices.Sorted(maps.Keys(c.caches)) {
		c.op.emit(telemetry.WatchStarted{Watch: telemetry.Watch{Controller: c.name, GVK: c.kind.GVK, Namespace: ns}})
	}
}

// listObserver wraps a ListWatch and reports every list after the first
// as WatchRelisted: a plain list, or a watch that streams the initial
// objects (client-go's watch-list).
type listObserver struct {
	lw    *cache.ListWatch
	op    *Operator
	w     telemetry.Watch
	lists atomic.Int64
}

var _ cache.ListerWatcherWithContext = (*listObserver)(nil)

func observeLists(lw *cache.ListWatch, op *Operator, w telemetry.Watch) *listObserver {
	return &listObserver{lw: lw, op: op, w: w}
}

func (l *listObserver) listed() {
	if l.lists.Add(1) > 1 {
		l.op.emit(telemetry.WatchRelisted{Watch: l.w})
	}
}

func (l *listObserver) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	obj, err := l.lw.ListWithContext(ctx, opts)
	if err == nil {
		l.listed()
	}
	return obj, err
}

func (l *listObserver) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := l.lw.WatchWithContext(ctx, opts)
	if err == nil && opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		l.listed()
	}
	return w, err
}

// List and Watch complete cache.ListerWatcher, which the informer
// constructor takes; client-go calls the context variants.
func (l *listObserver) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

func (l *listObserver) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

// newObject returns a new, empty T (T is a pointer to a struct).
func newObject[T apis.Object]() T {
	return reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
}
