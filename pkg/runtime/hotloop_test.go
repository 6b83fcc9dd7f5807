package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestAFlappingHandlerIsCaught: a handler that flips an annotation of its
// own object on every action, through a client of its own, wakes itself
// for ever. Within the default window the runtime finds the hot loop:
// one Warning Event and one log line that name the annotation, one count
// in opgen_hot_loops_total, and from then on the object backs off as
// after errors. A handler that converges beside it is never flagged.
func TestAFlappingHandlerIsCaught(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	log := &logLines{}
	h := newOperator(t, ns, nil, runtime.Options{Logger: funcr.New(log.write, funcr.Options{Verbosity: 1})})
	rec := &recorder{}
	telemetry.On(h.op.Telemetry(), rec.add)
	gadgets := ownGadgets(t, h.op, ns)
	fn := func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
		if a.Object.Name != "flapper" {
			return nil
		}
		next := "a"
		if a.Object.Annotations["example.com/flip"] == "a" {
			next = "b"
		}
		return annotate(ctx, gadgets, a, "example.com/flip", next)
	}
	c, err := runtime.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}, fn: fn}), runtime.ControllerOptions[*testapi.Gadget]{})
	require.NoError(t, err)
	h.start()
	start := time.Now()
	createGadget(t, ns, "calm", testapi.GadgetSpec{})
	createGadget(t, ns, "flapper", testapi.GadgetSpec{})

	events := h.op.Clientset().EventsV1().Events(ns)
	var warning eventsv1.Event
	eventually(t, "the HotLoop Warning Event", func() bool {
		list, err := events.List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		for _, e := range list.Items {
			if e.Reason == runtime.ReasonHotLoop {
				warning = e
				return true
			}
		}
		return false
	})
	assert.Less(t, time.Since(start), runtime.DefaultHotLoopWithin, "caught within the window")
	assert.Equal(t, corev1.EventTypeWarning, warning.Type)
	assert.Equal(t, "flapper", warning.Regarding.Name)
	assert.Contains(t, warning.Note, "between them metadata.annotations.example.com/flip changed")
	assert.Regexp(t, `"msg"="hot loop: [^"]*" "controller"="gadget" "namespace"="`+ns+`" "name"="flapper" "actions"=10 "within"="[^"]+" "flipping"=\["metadata.annotations.example.com/flip"\]`, log.String())
	assert.Equal(t, 1.0, metric(t, h.op, "opgen_hot_loops_total", "controller", "gadget"))
	assert.GreaterOrEqual(t, metric(t, h.op, "opgen_reconcile_triggers_total", "controller", "gadget", "trigger", "echo"), 9.0)

	// From then on its echoes wait for its backoff, which grows.
	key := cache.ObjectName{Namespace: ns, Name: "flapper"}
	eventually(t, "the flapping Gadget to back off three times", func() bool { return runtime.Requeues(c, key) >= 3 })
	var loops []telemetry.HotLoop
	for _, e := range rec.all() {
		if e, ok := e.(telemetry.HotLoop); ok {
			loops = append(loops, e)
		}
	}
	require.Len(t, loops, 1, "reported once, and never the Gadget that converged: %s", log.String())
	assert.Equal(t, "flapper", loops[0].Key.Name)
	assert.Zero(t, runtime.Requeues(c, cache.ObjectName{Namespace: ns, Name: "calm"}))
}
