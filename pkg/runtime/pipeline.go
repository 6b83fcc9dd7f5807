package runtime

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/lanes"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/observe"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/ownwrites"
)

// newPipeline builds a controller's pipeline: plug.Default with
// opts.Steps before Delegate, or opts.Pipeline, traced.
func newPipeline[T apis.Object](tracer trace.Tracer, opts ControllerOptions[T], env plug.Env[T], h plug.Handler[T]) plug.Pipeline[T] {
	if opts.Pipeline != nil {
		return observe.Traced(tracer, opts.Pipeline(env, h))
	}
	p := plug.Default(env, h)
	if len(opts.Steps) > 0 {
		p = append(append(p[:len(p)-1:len(p)-1], opts.Steps...), p[len(p)-1])
	}
	return observe.Traced(tracer, p)
}

// newEnv returns what the built-in steps need to know about a controller
// (ControllerOptions.Pipeline receives it). Its client and its store of
// owned objects count the writes the steps make through them in
// opgen_api_writes_total.
func newEnv[T apis.Object](op *Operator, kind Kind[T], opts ControllerOptions[T], h plug.Handler[T], objs *objects[T], queue *lanes.Keys, owned *ownedStore) plug.Env[T] {
	_, deletes := h.(plug.Deleter[T])
	count := func(what string) { op.metrics.Writes.WithLabelValues(opts.Name, what).Inc() }
	env := plug.Env[T]{
		GVK:          kind.GVK,
		Controller:   opts.Name,
		FieldManager: op.opts.Name,
		Finalizer:    opts.Finalizer,
		Deletes:      deletes,
		Client: func(ns string) plug.Client[T] {
			return kindClient[T]{Client: kind.Client(ns), namespace: ns, writes: &objs.writes, queue: queue,
				count: count}
		},
		Recorder: op.recorder,
	}
	if len(opts.Owns) > 0 {
		env.Owned = owned
		env.Retain = opts.Retain
	}
	return env
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
	count     func(what string)
}

func (c kindClient[T]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error) {
	key := cache.ObjectName{Namespace: c.namespace, Name: name}
	c.writes.Begin(key)
	obj, err := c.Client.Patch(ctx, name, pt, data, opts, subresources...)
	if c.writes.End(key, obj, err == nil, "") {
		c.queue.Wake(key, true)
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
