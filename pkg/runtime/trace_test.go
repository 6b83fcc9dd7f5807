package runtime_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/observe"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestTracing: with a TracerProvider, each action is a span with the
// controller, object and verb, and each pipeline step a child span,
// nested as the steps are, with the handler's span innermost.
func TestTracing(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	h := newOperator(t, ns, nil, runtime.Options{TracerProvider: tp})
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c}), runtime.ControllerOptions[*testapi.Gadget]{}))
	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{})
	eventually(t, "the Add span", func() bool { return reconcileSpan(spans.Ended(), "g", "Add") != nil })

	root := reconcileSpan(spans.Ended(), "g", "Add")
	attrs := map[attribute.Key]string{}
	for _, kv := range root.Attributes() {
		attrs[kv.Key] = kv.Value.String()
	}
	assert.Equal(t, "gadget", attrs[observe.AttrController])
	assert.Equal(t, ns, attrs[observe.AttrNamespace])

	// Follow the chain of step spans from the root down.
	var chain []string
	parent := root.SpanContext().SpanID()
	for {
		child := childOf(spans.Ended(), parent)
		if child == nil {
			break
		}
		chain = append(chain, child.Name())
		parent = child.SpanContext().SpanID()
	}
	assert.Equal(t, []string{
		"opgen.step Logger", "opgen.step RecordEvents", "opgen.step AddMissingGVK", "opgen.step Finalizer",
		"opgen.step ApplyStatus", "opgen.step ApplyOwned", "opgen.step ManagedByLabel", "opgen.step Delegate",
	}, chain)
	require.NoError(t, tp.Shutdown(context.Background()))
}

func reconcileSpan(spans []sdktrace.ReadOnlySpan, name, verb string) sdktrace.ReadOnlySpan {
	for _, s := range spans {
		if s.Name() != observe.SpanReconcile {
			continue
		}
		var n, v string
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case observe.AttrName:
				n = kv.Value.AsString()
			case observe.AttrVerb:
				v = kv.Value.AsString()
			}
		}
		if n == name && v == verb {
			return s
		}
	}
	return nil
}

func childOf(spans []sdktrace.ReadOnlySpan, parent interface{ String() string }) sdktrace.ReadOnlySpan {
	for _, s := range spans {
		if s.Parent().SpanID().String() == parent.String() {
			return s
		}
	}
	return nil
}
