package inflight

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// armed arms the deadline of reconcile with timeout, on a Stuck and a Bus
// of its own, and returns what the bus reported so far with it.
func armed(timeout time.Duration) (*Stuck, context.Context, *Deadline, func() []telemetry.ReconcileTimedOut) {
	var (
		s   Stuck
		bus telemetry.Bus
		mu  sync.Mutex
		got []telemetry.ReconcileTimedOut
	)
	telemetry.On(&bus, func(e telemetry.ReconcileTimedOut) {
		mu.Lock()
		got = append(got, e)
		mu.Unlock()
	})
	ctx, d := s.Arm(context.Background(), &bus, "gadget", reconcile, timeout)
	return &s, ctx, d, func() []telemetry.ReconcileTimedOut {
		mu.Lock()
		defer mu.Unlock()
		return append([]telemetry.ReconcileTimedOut(nil), got...)
	}
}

var reconcile = telemetry.Reconcile{Controller: "gadget", Key: cache.ObjectName{Namespace: "ns", Name: "a"}, Verb: "Add"}

// TestDeadlinePasses: the context ends at the deadline with a cause that
// names the action and wraps context.DeadlineExceeded; the deadline is
// reported, then, a grace period later (1s at the least), the action is
// reported and held as stuck until Done.
func TestDeadlinePasses(t *testing.T) {
	t.Parallel()
	s, ctx, d, events := armed(20 * time.Millisecond)
	<-ctx.Done()
	cause := context.Cause(ctx)
	require.ErrorIs(t, cause, context.DeadlineExceeded)
	assert.EqualError(t, cause, "runtime: controller gadget: the Add of ns/a ran past its ActionTimeout of 20ms: context deadline exceeded")
	require.Eventually(t, func() bool { return len(events()) == 1 }, 5*time.Second, time.Millisecond, "the deadline reported")
	assert.Equal(t, telemetry.ReconcileTimedOut{Reconcile: reconcile, Timeout: 20 * time.Millisecond}, events()[0])
	assert.NoError(t, s.Err(), "not stuck before the grace period ends")
	require.Eventually(t, func() bool { return len(events()) == 2 }, 5*time.Second, 10*time.Millisecond, "the stuck action reported after its grace period")
	assert.True(t, events()[1].Stuck)
	assert.ErrorContains(t, s.Err(), "1 handler(s) stuck past their action timeout, their context cancelled: gadget ns/a for ")
	d.Done()
	assert.NoError(t, s.Err(), "not stuck once it returned")
}

// TestDeadlineDoneAtTheDeadline: an action that returns when its context
// ends is reported as timed out once, whether or not the timer fired
// first, and never as stuck.
func TestDeadlineDoneAtTheDeadline(t *testing.T) {
	t.Parallel()
	for range 20 {
		_, ctx, d, events := armed(time.Millisecond)
		<-ctx.Done()
		d.Done()
		require.Eventually(t, func() bool { return len(events()) >= 1 }, 5*time.Second, time.Millisecond)
		time.Sleep(5 * time.Millisecond) // a late firing of the timer would show now
		assert.Equal(t, []telemetry.ReconcileTimedOut{{Reconcile: reconcile, Timeout: time.Millisecond}}, events())
	}
}

// TestDeadlineDoneInTime: an action that returns in time reports nothing
// and its context ends as cancelled, not timed out.
func TestDeadlineDoneInTime(t *testing.T) {
	t.Parallel()
	s, ctx, d, events := armed(time.Hour)
	d.Done()
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	assert.Empty(t, events())
	assert.NoError(t, s.Err())
}

// BenchmarkArm is the cost of an action's deadline when the action ends
// in time (see runtime's BenchmarkNoopReconcile for the whole action).
func BenchmarkArm(b *testing.B) {
	var (
		s   Stuck
		bus telemetry.Bus
	)
	b.ReportAllocs()
	for b.Loop() {
		_, d := s.Arm(context.Background(), &bus, "gadget", reconcile, time.Hour)
		d.Done()
	}
}

// A Set lists what began and did not end, by controller and key, sorted;
// recording allocates nothing once its map has grown.
func TestSetLists(t *testing.T) {
	var s Set
	a := s.Begin("gadget", cache.ObjectName{Namespace: "ns", Name: "b"})
	s.End(s.Begin("gadget", cache.ObjectName{Namespace: "ns", Name: "gone"}))
	s.Begin("runnable", cache.ObjectName{Name: "*main.sweeper"})
	s.Begin("gadget", cache.ObjectName{Namespace: "ns", Name: "a"})
	assert.Equal(t, []string{"gadget ns/a", "gadget ns/b", "runnable *main.sweeper"}, s.List())
	s.End(a)
	assert.Equal(t, []string{"gadget ns/a", "runnable *main.sweeper"}, s.List())
	key := cache.ObjectName{Namespace: "ns", Name: "c"}
	assert.Zero(t, testing.AllocsPerRun(100, func() { s.End(s.Begin("gadget", key)) }))
}
