package task_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/task"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/test/testkit"
)

var env = testenv.New(testenv.Options{})

func TestMain(m *testing.M) { env.Main(m) }

// harness is an operator with a task runner on a fake clock, and the
// task telemetry it emitted.
type harness struct {
	op     *runtime.Operator
	tasks  *task.Runner
	clk    *clocktesting.FakeClock
	mu     sync.Mutex
	events []telemetry.Event
}

func newHarness(t *testing.T, le runtime.LeaderElectionOptions) *harness {
	t.Helper()
	return newHarnessWith(t, le, task.Options{})
}

// newHarnessWith is newHarness with runner options; the clock is the
// harness's fake clock.
func newHarnessWith(t *testing.T, le runtime.LeaderElectionOptions, opts task.Options) *harness {
	t.Helper()
	ns := env.Namespace(t)
	if !le.Disabled {
		le.Namespace = ns
	}
	op, err := runtime.New(env.Config, runtime.Options{
		Name: "task-test", Namespaces: []string{ns}, MetricsAddr: "0", HealthAddr: "0",
		LeaderElection: le, Logger: testr.New(t),
	})
	require.NoError(t, err)
	h := &harness{op: op, clk: clocktesting.NewFakeClock(time.Now())}
	telemetry.On(op.Telemetry(), func(e telemetry.Event) {
		switch e.(type) {
		case telemetry.TaskRan, telemetry.TaskStopped, telemetry.LeaderAcquired, telemetry.TaskRegistered, telemetry.TaskInitialized:
			h.mu.Lock()
			h.events = append(h.events, e)
			h.mu.Unlock()
		}
	})
	opts.Clock = h.clk
	h.tasks, err = task.NewRunner(op, opts)
	require.NoError(t, err)
	return h
}

func (h *harness) run(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.op.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
}

func (h *harness) count(match func(telemetry.Event) bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, e := range h.events {
		if match(e) {
			n++
		}
	}
	return n
}

func (h *harness) runs() int {
	return h.count(func(e telemetry.Event) bool { _, ok := e.(telemetry.TaskRan); return ok })
}

// step waits until the task waits on the clock, then moves it by d.
func (h *harness) step(t *testing.T, d time.Duration) {
	t.Helper()
	eventually(t, "the task to wait on the clock", h.clk.HasWaiters)
	h.clk.Step(d)
}

func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, what, cond)
}

var noElection = runtime.LeaderElectionOptions{Disabled: true}

// TestContinueCarriesStateThenStop: each run gets the state the previous
// one returned; Stop ends the task; nothing runs before its interval.
func TestContinueCarriesStateThenStop(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noElection)
	var seen []int
	require.NoError(t, task.Register(h.tasks, task.Task[int]{
		Name: "count", Every: time.Minute, State: 10,
		Run: func(_ context.Context, n int) (task.Result[int], error) {
			seen = append(seen, n)
			if len(seen) == 3 {
				return task.Stop[int](), nil
			}
			return task.Continue(n + 1), nil
		},
	}))
	h.run(t)
	h.step(t, time.Minute-time.Nanosecond)
	assert.True(t, h.clk.HasWaiters(), "no run before the interval")
	h.clk.Step(time.Nanosecond)
	for i := 2; i <= 3; i++ {
		eventually(t, "a run", func() bool { return h.runs() == i-1 })
		h.step(t, time.Minute)
	}
	eventually(t, "TaskStopped", func() bool {
		return h.count(func(e telemetry.Event) bool {
			s, ok := e.(telemetry.TaskStopped)
			return ok && s.Reason == telemetry.StoppedByTask
		}) == 1
	})
	assert.Equal(t, []int{10, 11, 12}, seen)
	assert.Empty(t, h.tasks.Tasks())
	assert.False(t, h.clk.HasWaiters(), "a stopped task waits for nothing")
}

// TestErrorsBackOffAndAreCounted: a failed run is retried after 1s, then
// 2s, with the same state, and counted; success resets the interval.
func TestErrorsBackOffAndAreCounted(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noElection)
	var states []string
	require.NoError(t, task.Register(h.tasks, task.Task[string]{
		Name: "flaky", Every: time.Hour, RunAtStart: true, State: "s0",
		Run: func(_ context.Context, s string) (task.Result[string], error) {
			states = append(states, s)
			if len(states) <= 2 {
				return task.Result[string]{}, errors.New("external API down")
			}
			return task.Continue("s1"), nil
		},
	}))
	h.run(t)
	eventually(t, "the first run, at start", func() bool { return h.runs() == 1 })
	h.step(t, time.Second-time.Nanosecond)
	assert.True(t, h.clk.HasWaiters(), "no retry before the backoff")
	h.clk.Step(time.Nanosecond)
	eventually(t, "the retry after 1s", func() bool { return h.runs() == 2 })
	h.step(t, 2*time.Second-time.Nanosecond)
	assert.True(t, h.clk.HasWaiters(), "the backoff doubled")
	h.clk.Step(time.Nanosecond)
	eventually(t, "the retry after 2s", func() bool { return h.runs() == 3 })
	assert.Equal(t, []string{"s0", "s0", "s0"}, states, "a failed run keeps the state")
	assert.Equal(t, 2, h.count(func(e telemetry.Event) bool { r, ok := e.(telemetry.TaskRan); return ok && r.Err != nil }))
	assert.Equal(t, 2.0, counter(t, h.op, "opgen_task_runs_total", "error"))
	assert.Equal(t, 1.0, counter(t, h.op, "opgen_task_runs_total", "success"))
}

// TestUnregisterAndRegisterWhileRunning: a task registered while the
// operator leads starts at once; an unregistered one stops.
func TestUnregisterAndRegisterWhileRunning(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noElection)
	h.run(t)
	eventually(t, "leadership", h.op.Leading)
	ran := make(chan struct{}, 10)
	require.NoError(t, task.Register(h.tasks, task.Task[struct{}]{
		Name: "late", Every: time.Second, RunAtStart: true,
		Run: func(context.Context, struct{}) (task.Result[struct{}], error) {
			ran <- struct{}{}
			return task.Continue(struct{}{}), nil
		},
	}))
	<-ran
	require.ErrorContains(t, task.Register(h.tasks, task.Task[int]{Name: "late", Every: time.Second,
		Run: func(context.Context, int) (task.Result[int], error) { return task.Stop[int](), nil }}), "registered already")
	assert.True(t, h.tasks.Unregister("late"))
	assert.False(t, h.tasks.Unregister("late"))
	eventually(t, "the loop to stop waiting", func() bool { return !h.clk.HasWaiters() })
	assert.Equal(t, 1, h.count(func(e telemetry.Event) bool {
		s, ok := e.(telemetry.TaskStopped)
		return ok && s.Reason == telemetry.StoppedByUnregister
	}))
}

// TestRunsOnlyOnTheLeader: while another replica holds the lease the task
// does not run; it runs once this replica leads, after LeaderAcquired.
func TestRunsOnlyOnTheLeader(t *testing.T) {
	t.Parallel()
	h := newHarness(t, runtime.LeaderElectionOptions{LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond})
	le := h.op.Options().LeaderElection
	leases := env.Clientset().CoordinationV1().Leases(le.Namespace)
	_, err := leases.Create(context.Background(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: le.LeaseName},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("other-replica"), LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime: &metav1.MicroTime{Time: time.Now()}, RenewTime: &metav1.MicroTime{Time: time.Now()}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, task.Register(h.tasks, task.Task[int]{
		Name: "leader-only", Every: time.Hour, RunAtStart: true,
		Run: func(context.Context, int) (task.Result[int], error) { return task.Continue(0), nil },
	}))
	h.run(t)
	eventually(t, "the caches", h.op.Ready)
	assert.False(t, h.op.Leading())
	require.Zero(t, h.runs(), "no run while another replica leads")

	// The other replica releases the lease (empty holder), as on shutdown.
	lease, err := leases.Get(context.Background(), le.LeaseName, metav1.GetOptions{})
	require.NoError(t, err)
	lease.Spec.HolderIdentity = ptr.To("")
	_, err = leases.Update(context.Background(), lease, metav1.UpdateOptions{})
	require.NoError(t, err)
	eventually(t, "a run after taking the lease", func() bool { return h.runs() == 1 })
	h.mu.Lock()
	defer h.mu.Unlock()
	require.IsType(t, telemetry.TaskRegistered{}, h.events[0], "registered before the operator ran")
	require.IsType(t, telemetry.LeaderAcquired{}, h.events[1], "then the leadership, then the task starts and runs")
	require.IsType(t, telemetry.TaskInitialized{}, h.events[2])
}

func TestTaskIsChecked(t *testing.T) {
	h := newHarness(t, noElection)
	run := func(context.Context, int) (task.Result[int], error) { return task.Stop[int](), nil }
	for want, tk := range map[string]task.Task[int]{
		"Name":    {Every: time.Second, Run: run},
		"Every":   {Name: "t", Run: run},
		"Jitter":  {Name: "t", Every: time.Second, Jitter: 2, Run: run},
		"Run":     {Name: "t", Every: time.Second},
		"OnError": {Name: "t", Every: time.Second, Run: run, OnError: 7},
	} {
		assert.ErrorContains(t, task.Register(h.tasks, tk), want)
	}
}

func counter(t testing.TB, op *runtime.Operator, name, result string) float64 {
	t.Helper()
	return testkit.Metric(t, op, name, "result", result)
}

// TestKeepCarriesStateUnchanged: Keep runs the task again with the state
// it had, where Continue replaces it.
func TestKeepCarriesStateUnchanged(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noElection)
	var seen []int
	require.NoError(t, task.Register(h.tasks, task.Task[int]{
		Name: "keep", Every: time.Minute, RunAtStart: true, State: 1,
		Run: func(_ context.Context, n int) (task.Result[int], error) {
			seen = append(seen, n)
			switch len(seen) {
			case 1:
				return task.Keep[int](), nil
			case 2:
				return task.Continue(n + 10), nil
			}
			return task.Stop[int](), nil
		},
	}))
	h.run(t)
	eventually(t, "the first run", func() bool { return h.runs() == 1 })
	h.step(t, time.Minute)
	eventually(t, "the second run", func() bool { return h.runs() == 2 })
	h.step(t, time.Minute)
	eventually(t, "the third run", func() bool { return h.runs() == 3 })
	assert.Equal(t, []int{1, 1, 11}, seen, "Keep kept 1, Continue replaced it with 11")
}

// TestHaltOnError: with OnError Halt a failed run stops the task at once,
// reported with its error; nothing is retried.
func TestHaltOnError(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noElection)
	boom := errors.New("quota exceeded")
	require.NoError(t, task.Register(h.tasks, task.Task[int]{
		Name: "fragile", Every: time.Minute, RunAtStart: true, OnError: task.Halt,
		Run: func(context.Context, int) (task.Result[int], error) { return task.Keep[int](), boom },
	}))
	h.run(t)
	eventually(t, "the task to halt", func() bool {
		return h.count(func(e telemetry.Event) bool {
			s, ok := e.(telemetry.TaskStopped)
			return ok && s.Reason == telemetry.StoppedByError && errors.Is(s.Err, boom)
		}) == 1
	})
	assert.Equal(t, 1, h.runs())
	assert.Empty(t, h.tasks.Tasks(), "a halted task is unregistered")
	assert.False(t, h.clk.HasWaiters(), "no retry is scheduled")
}

// TestJitterSpreadsRuns: with Jitter 0.5 each interval is Every plus
// rand()×0.5×Every, drawn afresh each time: the injected draws 0, 0.5 and
// 0.9 put the runs 10s, 12.5s and 14.5s apart, and no run comes a
// nanosecond early.
func TestJitterSpreadsRuns(t *testing.T) {
	t.Parallel()
	draws := []float64{0, 0.5, 0.9}
	var i int
	h := newHarnessWith(t, noElection, task.Options{Rand: func() float64 {
		d := draws[i%len(draws)]
		i++
		return d
	}})
	require.NoError(t, task.Register(h.tasks, task.Task[int]{
		Name: "spread", Every: 10 * time.Second, Jitter: 0.5,
		Run: func(context.Context, int) (task.Result[int], error) { return task.Keep[int](), nil },
	}))
	h.run(t)
	for n, gap := range []time.Duration{10 * time.Second, 12500 * time.Millisecond, 14500 * time.Millisecond} {
		h.step(t, gap-time.Nanosecond)
		assert.True(t, h.clk.HasWaiters(), "run %d: not before %s", n+1, gap)
		assert.Equal(t, n, h.runs(), "run %d: not before %s", n+1, gap)
		h.clk.Step(time.Nanosecond)
		eventually(t, "the run after the jittered interval", func() bool { return h.runs() == n+1 })
	}
	assert.Equal(t, 1, h.count(func(e telemetry.Event) bool {
		s, ok := e.(telemetry.TaskInitialized)
		return ok && s.Task == "spread" && s.FirstRunIn == 10*time.Second
	}), "TaskInitialized says when the first run comes")
}
