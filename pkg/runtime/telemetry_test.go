package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// recorder collects telemetry events.
type recorder struct {
	mu     sync.Mutex
	events []telemetry.Event
}

func (r *recorder) add(e telemetry.Event) {
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
		case telemetry.ReconcileWoken:
			// Its triggers: TestEveryTriggerIsLoggedTracedAndCounted.
		case telemetry.WatchInitialized, telemetry.WatchChunkReceived, telemetry.WatchOpened, telemetry.WatchFinished,
			telemetry.WatchTimedOut, telemetry.WatchStopped, telemetry.ControllerStarted, telemetry.ControllerStopped:
			// Lifecycle events come from other goroutines (the reflector's):
			// TestLifecycleEvents checks them.
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
	telemetry.On(h.op.Telemetry(), rec.add)
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c, fn: func(context.Context, *plug.Action[*testapi.Gadget]) error {
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

// TestLifecycleEvents: Bonny's watcher and reconciler lifecycle events
// have typed counterparts that fire against a real API server: the watch
// is initialized, its list arrives as a chunk, its watch opens, the
// controller's workers start, and at shutdown the workers and the watch
// stop. The watch metrics count them.
func TestLifecycleEvents(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	rec := &recorder{}
	telemetry.On(h.op.Telemetry(), rec.add)
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}}), runtime.ControllerOptions[*testapi.Gadget]{}))
	h.start()
	has := func(name string) bool {
		for _, e := range rec.all() {
			if e.Name() == name {
				return true
			}
		}
		return false
	}
	eventually(t, "the controller's workers to start", func() bool { return has("controller.started") })
	eventually(t, "the watch to open", func() bool { return has("watch.opened") })
	require.NoError(t, h.stop())
	eventually(t, "the watch to stop", func() bool { return has("watch.stopped") })
	var names []string
	for _, e := range rec.all() {
		names = append(names, e.Name())
	}
	// watch.chunk.received needs a plain list; client-go may stream the
	// initial objects in the watch instead (TestListChunks covers chunks).
	for _, want := range []string{"watch.initialized", "watch.opened", "watch.started", "controller.started", "controller.stopped", "watch.stopped"} {
		assert.Contains(t, names, want)
	}
	assert.Less(t, slices.Index(names, "watch.initialized"), slices.Index(names, "watch.opened"), "initialized before the first watch")
	assert.Less(t, slices.Index(names, "controller.started"), slices.Index(names, "controller.stopped"))
	assert.GreaterOrEqual(t, metric(t, h.op, "opgen_watch_events_total", "controller", "gadget", "event", "watch.opened"), 1.0)
}
