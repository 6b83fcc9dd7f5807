package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/internal/testapi"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// recorder collects telemetry events.
type recorder struct {
	mu     sync.Mutex
	events []telemetry.Event
}

func (r *recorder) Handle(e telemetry.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) all() []telemetry.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]telemetry.Event(nil), r.events...)
}

// describe spells the events of object name (and those about no object)
// as "name[ verb]" lines, in order.
func (r *recorder) describe(name string) []string {
	var out []string
	for _, e := range r.all() {
		switch e := e.(type) {
		case telemetry.ReconcileStarted:
			if e.Key.Name == name {
				out = append(out, e.Name()+" "+e.Verb)
			}
		case telemetry.ReconcileSucceeded:
			if e.Key.Name == name {
				out = append(out, e.Name()+" "+e.Verb)
			}
		case telemetry.ReconcileFailed:
			if e.Key.Name == name {
				out = append(out, fmt.Sprintf("%s %s terminal=%t: %v", e.Name(), e.Verb, e.Terminal, e.Err))
			}
		case telemetry.LeaderLost:
			out = append(out, fmt.Sprintf("%s graceful=%t", e.Name(), e.Graceful))
		default:
			out = append(out, e.Name())
		}
	}
	return out
}

// TestTelemetryEventsInOrder: a subscriber sees the watch start, the
// leadership, each action's start and end (a failure, then the retry that
// succeeds) and the handover at shutdown, in the order they happened; the
// metrics count the same events.
func TestTelemetryEventsInOrder(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	rec := &recorder{}
	h.op.Telemetry().Subscribe(rec)
	c := &calls{}
	require.NoError(t, register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c, fn: func(context.Context, *plug.Action[*testapi.Gadget]) error {
		if c.n.Load() == 1 {
			return errors.New("first try fails")
		}
		return nil
	}}), runtime.ControllerOptions[*testapi.Gadget]{}))

	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{})
	eventually(t, "the retried Add to succeed", func() bool {
		for _, e := range rec.all() {
			if s, ok := e.(telemetry.ReconcileSucceeded); ok && s.Key.Name == "g" {
				return true
			}
		}
		return false
	})
	require.NoError(t, h.stop())

	assert.Equal(t, []string{
		"watch.started",
		"leader.acquired",
		"reconcile.started Add",
		"reconcile.failed Add terminal=false: first try fails",
		"reconcile.started Add",
		"reconcile.succeeded Add",
		"leader.lost graceful=true",
	}, withoutLaterReconciles(rec.describe("g")))
	assert.Equal(t, 2.0, metric(t, h.op, "opgen_reconcile_total", "controller", "gadget", "verb", "Add"), "the metrics count the same events")
	assert.Equal(t, 1.0, metric(t, h.op, "opgen_reconcile_errors_total", "verb", "Add"))
	assert.Zero(t, metric(t, h.op, "opgen_leader"))
}

// withoutLaterReconciles drops events after the successful Add but the
// handover: no other action is expected, but whether one comes is not what
// the test is about.
func withoutLaterReconciles(lines []string) []string {
	var out []string
	done := false
	for _, l := range lines {
		if done && l != "leader.lost graceful=true" {
			continue
		}
		out = append(out, l)
		done = done || l == "reconcile.succeeded Add"
	}
	return out
}
