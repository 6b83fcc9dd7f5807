package webhook_test

import (
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/webhook"
)

// TestRequestSpans: with a TracerProvider, each request is a span
// opgen.webhook naming the webhook, the operation and the object, in
// error when rejected.
func TestRequestSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	op, err := runtime.New(&rest.Config{Host: "https://127.0.0.1:1"}, runtime.Options{
		Name: "gizmo-operator", LeaderElection: runtime.LeaderElectionOptions{Disabled: true}, Logger: logr.Discard(),
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)),
	})
	require.NoError(t, err)
	require.NoError(t, webhook.Validate(op, gizmoKind, gizmoWebhook{}))
	require.NoError(t, webhook.Convert(op, gizmoScheme(), gizmoHub, "gizmos"))
	h := webhook.HandlerFor(op)
	admit(t, h, validatePath, admissionReview(admissionv1.Create, gizmo(1, "red"), nil))
	admit(t, h, validatePath, admissionReview(admissionv1.Create, gizmo(11, "red"), nil))
	convert(t, h, conversionReview(gizmoV1alpha1.String(), gizmo(1, "red")))

	spans := rec.Ended()
	require.Len(t, spans, 3)
	for _, s := range spans {
		assert.Equal(t, webhook.SpanWebhook, s.Name())
	}
	attrs := attribute.NewSet(spans[0].Attributes()...)
	v, _ := attrs.Value(webhook.AttrWebhook)
	assert.Equal(t, "vgizmo.whtest.opgen.dev", v.AsString())
	v, _ = attrs.Value(webhook.AttrOperation)
	assert.Equal(t, "CREATE", v.AsString())
	v, _ = attrs.Value(webhook.AttrAllowed)
	assert.True(t, v.AsBool())
	assert.Equal(t, codes.Unset, spans[0].Status().Code)
	assert.Equal(t, codes.Error, spans[1].Status().Code, "a rejection is an error span")
	assert.Contains(t, spans[1].Status().Description, "spec.size: Invalid value")
	convAttrs := attribute.NewSet(spans[2].Attributes()...)
	v, _ = convAttrs.Value(webhook.AttrWebhook)
	assert.Equal(t, "convert", v.AsString())
}
