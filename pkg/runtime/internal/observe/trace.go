package observe

import (
	"context"
	"slices"

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
	// AttrTriggers are the kinds of what woke the action, and
	// AttrTriggerObjects the objects whose changes did ("Kind ns/name"),
	// when they are not the action's own. A link to the span of the
	// object's previous action carries AttrTrigger: the kind of trigger
	// (a retry, a requeue, a periodic tick, an echo) that action caused.
	AttrTriggers       = "opgen.triggers"
	AttrTriggerObjects = "opgen.trigger.objects"
	AttrTrigger        = "opgen.trigger"
)

// NewTracer returns opgen's tracer of tp, or nil when tracing is off.
func NewTracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return nil
	}
	return tp.Tracer(tracerName)
}

// StartReconcile starts the span of one action woken by ts, or does
// nothing when tracing is off. The triggers that the object's previous
// action caused (its span: previous) link to it.
func StartReconcile(ctx context.Context, tr trace.Tracer, r telemetry.Reconcile, ts telemetry.Triggers, previous trace.SpanContext) (context.Context, trace.Span) {
	if tr == nil {
		return ctx, nil
	}
	kinds := make([]string, 0, len(ts))
	var objects []string
	var links []trace.Link
	for _, t := range ts {
		if !slices.Contains(kinds, string(t.Kind)) {
			kinds = append(kinds, string(t.Kind))
		}
		if t.Object != "" {
			objects = append(objects, t.Object)
		}
		switch t.Kind {
		case telemetry.TriggerEcho, telemetry.TriggerRetry, telemetry.TriggerRequeue, telemetry.TriggerPeriodic:
			if previous.IsValid() && !slices.ContainsFunc(links, func(l trace.Link) bool { return l.Attributes[0].Value.AsString() == string(t.Kind) }) {
				links = append(links, trace.Link{SpanContext: previous, Attributes: []attribute.KeyValue{attribute.String(AttrTrigger, string(t.Kind))}})
			}
		}
	}
	attrs := []attribute.KeyValue{
		attribute.String(AttrController, r.Controller),
		attribute.String(AttrNamespace, r.Key.Namespace),
		attribute.String(AttrName, r.Key.Name),
		attribute.String(AttrVerb, r.Verb),
		attribute.String(AttrID, r.ID),
		attribute.StringSlice(AttrTriggers, kinds),
	}
	if len(objects) > 0 {
		attrs = append(attrs, attribute.StringSlice(AttrTriggerObjects, objects))
	}
	return tr.Start(ctx, SpanReconcile, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...), trace.WithLinks(links...))
}

// EndSpan ends span, with err's status, and returns its context (the zero
// one when tracing is off).
func EndSpan(span trace.Span, err error) trace.SpanContext {
	if span == nil {
		return trace.SpanContext{}
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
	return span.SpanContext()
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
