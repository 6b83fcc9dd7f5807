package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/observe"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// logLines are a logger's output, safe for concurrent writes.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) write(prefix, args string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(&l.buf, "%s %s\n", prefix, args)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// ownGadgets is a client of Gadgets on the operator's own config, as a
// handler builds one: its writes are the operator's, but not the
// runtime's steps'.
func ownGadgets(t testing.TB, op *runtime.Operator, ns string) testapi.Client {
	t.Helper()
	c, err := testapi.NewForConfigAndClient(op.RESTConfig(), op.HTTPClient())
	require.NoError(t, err)
	return c.Gadgets(ns)
}

// annotate sets annotation key=value on the Gadget a handles, through c.
func annotate(ctx context.Context, c testapi.Client, a *plug.Action[*testapi.Gadget], key, value string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, key, value)
	_, err := c.Patch(ctx, a.Object.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// TestEveryTriggerIsLoggedTracedAndCounted: each kind of trigger reaches
// the action it woke: in the action's log line ("handling", V(1)), in its
// span's attributes, and in opgen_reconcile_triggers_total. An echo names
// the field the operator's write changed; an owned object's change names
// the object; a retry links to the span of the action that failed.
func TestEveryTriggerIsLoggedTracedAndCounted(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	createGadget(t, ns, "early", testapi.GadgetSpec{}) // before the start
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	log := &logLines{}
	h := newOperator(t, ns, nil, runtime.Options{TracerProvider: tp,
		Logger: funcr.New(log.write, funcr.Options{Verbosity: 1})})
	gadgets := ownGadgets(t, h.op, ns)
	var mu sync.Mutex
	seen := map[string]int{}
	fn := func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
		mu.Lock()
		seen[a.Object.Name]++
		n := seen[a.Object.Name]
		mu.Unlock()
		a.Own(corev1ac.ConfigMap(a.Object.Name+"-cm", "").WithData(map[string]string{"k": "v"}))
		switch {
		case a.Object.Name == "requeue" && n == 1:
			a.RequeueAfter(50 * time.Millisecond)
		case a.Object.Name == "retry" && n == 1:
			return errors.New("the first action fails")
		case a.Object.Name == "echo" && a.Verb == plug.Reconcile && a.Object.Annotations["echoed"] == "":
			// Not in the Add, whose status write the echo could meet on
			// its way (a change seen then names no fields).
			return annotate(ctx, gadgets, a, "echoed", "yes")
		}
		return nil
	}
	secrets := schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	c, err := runtime.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}, fn: fn}), runtime.ControllerOptions[*testapi.Gadget]{
		Owns:           []schema.GroupVersionKind{configMapGVK},
		ReconcileEvery: 2 * time.Second,
		Watches: []runtime.Watch{{Kind: secrets, Map: func(m metav1.Object) []cache.ObjectName {
			if g := m.GetLabels()["gadget"]; g != "" {
				return []cache.ObjectName{{Namespace: m.GetNamespace(), Name: g}}
			}
			return nil
		}}},
	})
	require.NoError(t, err)
	h.start()
	for _, name := range []string{"fresh", "requeue", "retry", "echo"} {
		createGadget(t, ns, name, testapi.GadgetSpec{})
	}
	kube := h.op.Clientset()
	ctx := context.Background()
	eventually(t, "fresh's ConfigMap", func() bool {
		_, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "fresh-cm", metav1.GetOptions{})
		return err == nil
	})
	_, err = kube.CoreV1().ConfigMaps(ns).Patch(ctx, "fresh-cm", types.MergePatchType, []byte(`{"metadata":{"labels":{"someone":"else"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	_, err = kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Labels: map[string]string{"gadget": "fresh"}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	c.Enqueue(cache.ObjectName{Namespace: ns, Name: "fresh"})

	for _, k := range telemetry.TriggerKinds {
		eventually(t, string(k)+" in a span", func() bool { return triggeredSpan(spans.Ended(), k) != nil })
		assert.GreaterOrEqual(t, metric(t, h.op, "opgen_reconcile_triggers_total", "controller", "gadget", "trigger", string(k)), 1.0, "counted: %s", k)
		assert.Regexp(t, regexp.MustCompile(`"msg"="handling" .*"triggers"="[^"]*\b`+string(k)+`\b`), log.String(), "logged: %s", k)
	}
	echo := triggeredSpan(spans.Ended(), telemetry.TriggerEcho)
	assert.Equal(t, "echo", spanAttr(echo, observe.AttrName))
	assert.Regexp(t, `"name"="echo" .*"triggers"="echo\(gen 1 rv \d+ fields metadata\.annotations\.echoed\)"`, log.String())
	owned := triggeredSpan(spans.Ended(), telemetry.TriggerOwned)
	for _, kv := range owned.Attributes() {
		if kv.Key == observe.AttrTriggerObjects {
			assert.Contains(t, kv.Value.AsStringSlice(), "ConfigMap "+ns+"/fresh-cm")
		}
	}
	assert.Equal(t, "fresh", spanAttr(triggeredSpan(spans.Ended(), telemetry.TriggerWatched), observe.AttrName))
	assert.Equal(t, "early", spanAttr(triggeredSpan(spans.Ended(), telemetry.TriggerStart), observe.AttrName))
	retry := triggeredSpan(spans.Ended(), telemetry.TriggerRetry)
	require.Len(t, retry.Links(), 1, "a retry links to the action that failed")
	failed := slices.IndexFunc(spans.Ended(), func(s sdktrace.ReadOnlySpan) bool {
		return s.SpanContext().SpanID() == retry.Links()[0].SpanContext.SpanID()
	})
	require.GreaterOrEqual(t, failed, 0)
	assert.Equal(t, "retry", spanAttr(spans.Ended()[failed], observe.AttrName))
	assert.Equal(t, "Error", spans.Ended()[failed].Status().Code.String())
	require.NoError(t, tp.Shutdown(context.Background()))
}

// triggeredSpan returns an action's span whose triggers include k.
func triggeredSpan(spans []sdktrace.ReadOnlySpan, k telemetry.TriggerKind) sdktrace.ReadOnlySpan {
	for _, s := range spans {
		for _, kv := range s.Attributes() {
			if kv.Key == observe.AttrTriggers && slices.Contains(kv.Value.AsStringSlice(), string(k)) {
				return s
			}
		}
	}
	return nil
}

func spanAttr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.AsString()
		}
	}
	return ""
}
