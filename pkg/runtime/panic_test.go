package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestPanicIsRecorded: a handler's panic is an error inside the pipeline:
// the object gets Degraded=True naming the panic and a Warning event, and
// the failure is counted.
func TestPanicIsRecorded(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}, fn: func(context.Context, *plug.Action[*testapi.Gadget]) error {
		panic("boom")
	}}), runtime.ControllerOptions[*testapi.Gadget]{RateLimiter: slowRetries()}))
	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{})
	eventually(t, "Degraded=True naming the panic", func() bool {
		g, err := getGadget(t, ns, "g")
		if err != nil {
			return false
		}
		for _, c := range g.Status.Conditions {
			if c.Type == "Degraded" && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, "handler panicked: boom") {
				return true
			}
		}
		return false
	})
	eventually(t, "a Warning event naming the panic", func() bool {
		evs, err := env.Clientset().EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range evs.Items {
			if e.Type == "Warning" && e.Regarding.Name == "g" && strings.Contains(e.Note, "handler panicked: boom") {
				return true
			}
		}
		return false
	})
	eventually(t, "the failure counted", func() bool {
		return metric(t, h.op, "opgen_reconcile_errors_total", "controller", "gadget") > 0
	})
}
