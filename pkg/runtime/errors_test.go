package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestErrorIsRetriedWithBackoff steps an injected clock: a failed Add is
// tried again only after the backoff delay, which doubles, and the verb
// stays Add until it succeeds.
func TestErrorIsRetriedWithBackoff(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	clk := clocktesting.NewFakeClock(time.Now())
	h := newOperator(t, ns, nil, runtime.Options{Clock: clk, LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c, fn: func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
		if c.n.Load() <= 2 {
			return errors.New("not yet")
		}
		return nil
	}}), runtime.ControllerOptions[*testapi.Gadget]{}))

	h.start()

	createGadget(t, ns, "g", testapi.GadgetSpec{})
	eventually(t, "the first try", func() bool { return metric(t, h.op, "opgen_reconcile_total", "verb", "Add") == 1 })
	assertCallsStay(t, c, 1, clk, 4*time.Millisecond)
	clk.Step(time.Millisecond) // 5ms: the first backoff
	eventually(t, "the second try", func() bool { return metric(t, h.op, "opgen_reconcile_total", "verb", "Add") == 2 })
	assertCallsStay(t, c, 2, clk, 9*time.Millisecond)
	clk.Step(time.Millisecond) // 10ms: the doubled backoff
	eventually(t, "the third try", func() bool { return metric(t, h.op, "opgen_reconcile_total", "verb", "Add") == 3 })
	assert.Equal(t, []plug.Verb{plug.Add, plug.Add, plug.Add}, c.verbs("g"))
	assert.Equal(t, 2.0, metric(t, h.op, "opgen_workqueue_retries_total", "name", "gadget"))
	eventually(t, "Degraded cleared after the success", func() bool {
		g, err := getGadget(t, ns, "g")
		return err == nil && g.Status.ObservedGeneration == 1 && !apis.IsTrue(g, apis.Degraded)
	})
}

// TestRequeueCountsFromTheActionStart: the delay a handler asks for
// counts from when its action began. A clock that moves an hour while the
// action runs leaves nothing of a one-hour RequeueAfter, and the next
// action comes at once instead of an hour late.
func TestRequeueCountsFromTheActionStart(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	clk := clocktesting.NewFakeClock(time.Now())
	h := newOperator(t, ns, nil, runtime.Options{Clock: clk, LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c, fn: func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
		a.RequeueAfter(time.Hour)
		if c.n.Load() == 1 {
			clk.Step(time.Hour) // a slow first action, in the fake clock's time
		}
		return nil
	}}), runtime.ControllerOptions[*testapi.Gadget]{}))
	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{})
	eventually(t, "the second action, with no further step of the clock", func() bool { return c.n.Load() == 2 })
	assertCallsStay(t, c, 2, clk, time.Hour-time.Millisecond)
}

// assertCallsStay steps the clock by d and checks that no further action
// ran in 200ms of real time.
func assertCallsStay(t *testing.T, c *calls, n int64, clk *clocktesting.FakeClock, d time.Duration) {
	t.Helper()
	clk.Step(d)
	deadline := time.Now().Add(200 * time.Millisecond)
	for time.Now().Before(deadline) {
		require.Equal(t, n, c.n.Load(), "an action ran before its backoff elapsed")
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTerminalErrorIsRecordedNotRetried: a terminal error sets Degraded,
// emits a Warning event and counts in the metric, and is not retried even
// when the clock moves on.
func TestTerminalErrorIsRecordedNotRetried(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	clk := clocktesting.NewFakeClock(time.Now())
	h := newOperator(t, ns, nil, runtime.Options{Clock: clk, LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c, fn: func(context.Context, *plug.Action[*testapi.Gadget]) error {
		return plug.Terminal(errors.New("spec.size is impossible"))
	}}), runtime.ControllerOptions[*testapi.Gadget]{ReconcileEvery: time.Minute}))

	h.start()

	createGadget(t, ns, "g", testapi.GadgetSpec{})
	eventually(t, "Degraded", func() bool {
		g, err := getGadget(t, ns, "g")
		return err == nil && apis.IsTrue(g, apis.Degraded)
	})
	g, _ := getGadget(t, ns, "g")
	assert.Zero(t, g.Status.ObservedGeneration, "a failed Add does not advance observedGeneration")
	eventually(t, "a Warning event", func() bool {
		list, err := env.Clientset().EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		return err == nil && hasEvent(list.Items, "Warning", plug.ReasonTerminal, "spec.size is impossible")
	})
	assert.Equal(t, 1.0, metric(t, h.op, "opgen_reconcile_errors_total", "verb", "Add", "terminal", "true"))
	assertCallsStay(t, c, 1, clk, time.Hour)
	assert.Zero(t, metric(t, h.op, "opgen_workqueue_retries_total", "name", "gadget"))
}

func hasEvent(events []eventsv1.Event, typ, reason, note string) bool {
	for _, e := range events {
		if e.Type == typ && e.Reason == reason && strings.Contains(e.Note, note) {
			return true
		}
	}
	return false
}

// TestPeriodicReconcile steps an injected clock: Reconcile runs once per
// ReconcileEvery after the last handling, and not before.
func TestPeriodicReconcile(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	clk := clocktesting.NewFakeClock(time.Now())
	h := newOperator(t, ns, nil, runtime.Options{Clock: clk, LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c}),
		runtime.ControllerOptions[*testapi.Gadget]{ReconcileEvery: time.Minute}))

	h.start()

	createGadget(t, ns, "g", testapi.GadgetSpec{})
	eventually(t, "Add", func() bool { return metric(t, h.op, "opgen_reconcile_total", "verb", "Add") == 1 })
	assertCallsStay(t, c, 1, clk, 59*time.Second)
	for i := 1; i <= 3; i++ {
		clk.Step(time.Second)
		eventually(t, "a periodic Reconcile", func() bool {
			return metric(t, h.op, "opgen_reconcile_total", "verb", "Reconcile") == float64(i)
		})
		if i < 3 {
			assertCallsStay(t, c, int64(i+1), clk, 59*time.Second)
		}
	}
	assert.Equal(t, []plug.Verb{plug.Add, plug.Reconcile, plug.Reconcile, plug.Reconcile}, c.verbs("g"))
}
