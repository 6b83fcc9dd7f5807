package runtime

import (
	"context"
	"maps"
	"reflect"
	"slices"

	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/observe"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/shard"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

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

// watchesStarted emits WatchStarted for each of the controller's
// informers, in namespace order.
func (c *Controller[T]) watchesStarted() {
	infs := c.informers()
	c.started.Store(&infs)
	for _, ns := range slices.Sorted(maps.Keys(c.caches)) {
		c.op.bus.Emit(telemetry.WatchStarted{Watch: telemetry.Watch{Controller: c.name, GVK: c.kind.GVK, Namespace: ns}})
	}
}

// newObject returns a new, empty T (T is a pointer to a struct).
func newObject[T apis.Object]() T {
	return reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
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
			return c.kindInformer(ns, w, c.op.shardKeys.Share(b))
		}, c.op.shardKeys.Route())
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
		if inf, err = c.kindInformer(ns, w, shard.Share{}); err != nil {
			return nil, err
		}
	}
	_, err := inf.AddEventHandler(c.events())
	c.op.bus.Emit(telemetry.WatchInitialized{Watch: w})
	return inf, err
}

// kindInformer makes an informer of the kind's objects in ns in share
// (all for the zero Share).
func (c *Controller[T]) kindInformer(ns string, w telemetry.Watch, share shard.Share) (cache.SharedIndexInformer, error) {
	lw := observe.ObserveLists(c.kind.ListWatch(ns), w, c.op.bus.Emit, &c.op.relists)
	lw.Selector, lw.ShardSelector = share.Label, share.Server
	lw.Transform = versionTurn[T]{c}.transform()
	inf := cache.NewSharedIndexInformer(lw, newObject[T](), 0, cache.Indexers{})
	return inf, observeWatch(inf, c.op, w)
}
