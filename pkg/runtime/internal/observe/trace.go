package observe

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// tracerName is the instrumentation scope of opgen's spans.
const tracerName = "github.com/opgen-sdk/opgen/pkg/runtime"

// Span names and attributes of a Traced action, as docs/runtime.md lists
// them.
const (
	SpanReconcile = "opgen.reconcile"
	SpanStep      = "opgen.step"

	AttrController = "opgen.controller"
	AttrNamespace  = "k8s.namespace.name"
	AttrName       = "opgen.object.name"
	AttrVerb       = "opgen.verb"
	AttrID         = "opgen.reconcile_id"
	AttrStep       = "opgen.step"
)

// NewTracer returns opgen's tracer of tp, or nil when tracing is off.
func NewTracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return nil
	}
	return tp.Tracer(tracerName)
}

// StartReconcile starts the span of one action, or does nothing when
// tracing is off.
func StartReconcile(ctx context.Context, tr trace.Tracer, r telemetry.Reconcile) (context.Context, trace.Span) {
	if tr == nil {
		return ctx, nil
	}
	return tr.Start(ctx, SpanReconcile, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		attribute.String(AttrController, r.Controller),
		attribute.String(AttrNamespace, r.Key.Namespace),
		attribute.String(AttrName, r.Key.Name),
		attribute.String(AttrVerb, r.Verb),
		attribute.String(AttrID, r.ID),
	))
}

func EndSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// Traced wraps each step of p in a span named after it (plug.StepName);
// the spans nest as the steps do. Without a tracer p is returned as it
// is, so tracing costs nothing when off.
func Traced[T apis.Object](tr trace.Tracer, p plug.Pipeline[T]) plug.Pipeline[T] {
	if tr == nil {
		return p
	}
	out := make(plug.Pipeline[T], len(p))
	for i, s := range p {
		name := plug.StepName(s)
		out[i] = plug.Named(name, plug.StepFunc[T](func(ctx context.Context, a *plug.Action[T], next plug.Next) error {
			ctx, span := tr.Start(ctx, SpanStep+" "+name, trace.WithAttributes(attribute.String(AttrStep, name)))
			err := s.Run(ctx, a, next)
			EndSpan(span, err)
			return err
		}))
	}
	return out
}
