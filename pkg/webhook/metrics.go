package webhook

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the instrumentation scope of the webhook spans.
const tracerName = "github.com/opgen-sdk/opgen/pkg/webhook"

// Span name and attributes of a webhook request, beside the runtime's
// reconcile spans.
const (
	SpanWebhook    = "opgen.webhook"
	AttrWebhook    = "opgen.webhook"
	AttrOperation  = "opgen.webhook.operation"
	AttrUID        = "opgen.webhook.uid"
	AttrAllowed    = "opgen.webhook.allowed"
	AttrNamespace  = "k8s.namespace.name"
	AttrObjectName = "opgen.object.name"
)

// Results of a request (the result label of opgen_webhook_requests_total).
const (
	resultAllowed   = "allowed"   // admitted (defaulting patched or not)
	resultRejected  = "rejected"  // the user's code said no
	resultError     = "error"     // a bad request, a panic, a failed conversion
	resultConverted = "converted" // a conversion review answered
)

// serverMetrics are the webhook server's collectors, in the operator's
// registry.
type serverMetrics struct {
	requests   *prometheus.CounterVec
	rejections *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	checks     *prometheus.CounterVec // of the configurations (stale.go)
	certExpiry *certificateExpiry
}

func newServerMetrics(reg *prometheus.Registry) *serverMetrics {
	m := &serverMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "opgen_webhook_requests_total", Help: "Webhook requests answered, by webhook (its name in the configuration, or convert) and result (allowed, rejected, error, converted).",
		}, []string{"webhook", "result"}),
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "opgen_webhook_rejections_total", Help: "Admission requests rejected, by webhook, operation and HTTP status code of the rejection.",
		}, []string{"webhook", "operation", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "opgen_webhook_request_duration_seconds", Help: "Time to answer a webhook request, decoding and encoding included, by webhook.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"webhook"}),
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "opgen_webhook_configuration_checks_total", Help: "Checks for webhook configurations that call webhooks this operator does not serve, by result (clean, stale, denied: the API server refused the read, error).",
		}, []string{"result"}),
		certExpiry: newCertificateExpiry(),
	}
	for _, c := range []prometheus.Collector{m.requests, m.rejections, m.duration, m.checks, m.certExpiry} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				panic(err) // the names are ours; only a duplicate can collide
			}
		}
	}
	return m
}

// observe records one answered request.
func (m *serverMetrics) observe(webhook, result string, start time.Time) {
	m.requests.WithLabelValues(webhook, result).Inc()
	m.duration.WithLabelValues(webhook).Observe(time.Since(start).Seconds())
}

// startSpan starts a request's span, or does nothing without a tracer.
func (s *server) startSpan(ctx context.Context, webhook string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if s.tracer == nil {
		return ctx, nil
	}
	return s.tracer.Start(ctx, SpanWebhook, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(append([]attribute.KeyValue{attribute.String(AttrWebhook, webhook)}, attrs...)...))
}

func endSpan(span trace.Span, err error, attrs ...attribute.KeyValue) {
	if span == nil {
		return
	}
	span.SetAttributes(attrs...)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
