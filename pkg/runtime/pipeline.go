package runtime

import (
	"go.opentelemetry.io/otel/trace"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/lanes"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/observe"
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
		Client:       objs.clients(kind, queue, &op.revisions, count),
		Recorder:     op.recorder,
	}
	if len(opts.Owns) > 0 {
		env.Owned = owned
		//lint:ignore SA1019 filled for a ControllerOptions.Pipeline that reads the old name, until it goes
		env.Descendants = owned
		env.Retain = opts.Retain
	}
	return env
}
