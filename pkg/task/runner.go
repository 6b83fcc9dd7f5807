package task

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Options configure a Runner.
type Options struct {
	// Clock times the tasks. Default: the operator's Options.Clock. Tests
	// inject k8s.io/utils/clock/testing.FakeClock and step it.
	Clock clock.WithTicker
	// InitialBackoff is the delay before retrying a failed run; it
	// doubles with each failure in a row up to MaxBackoff. Defaults 1s and
	// 5m.
	InitialBackoff, MaxBackoff time.Duration
	// Rand returns a random number in [0, 1) for the tasks' jitter.
	// Default math/rand/v2's Float64; tests inject a sequence.
	Rand func() float64
}

func (o Options) complete(op *runtime.Operator) (Options, error) {
	if o.Clock == nil {
		o.Clock = op.Options().Clock
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	if o.InitialBackoff == 0 {
		o.InitialBackoff = time.Second
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = 5 * time.Minute
	}
	if o.InitialBackoff < 0 || o.MaxBackoff < o.InitialBackoff {
		return o, fmt.Errorf("task.NewRunner: MaxBackoff (%s) must be at least InitialBackoff (%s), and both positive", o.MaxBackoff, o.InitialBackoff)
	}
	return o, nil
}

// Runner runs registered tasks while its operator leads.
type Runner struct {
	op   *runtime.Operator
	opts Options

	mu      sync.Mutex
	tasks   map[string]*entry
	leadCtx context.Context // nil while not leading
	loops   sync.WaitGroup
}

var _ runtime.Runnable = (*Runner)(nil)

// NewRunner returns a Runner added to op (op.Add), so call it before
// op.Run. Tasks may be registered before or after.
func NewRunner(op *runtime.Operator, opts Options) (*Runner, error) {
	opts, err := opts.complete(op)
	if err != nil {
		return nil, err
	}
	r := &Runner{op: op, opts: opts, tasks: map[string]*entry{}}
	subscribeMetrics(op)
	return r, op.AddLeaderRunnable(r)
}

// Register adds t to r. It starts at once when r's operator leads.
func Register[S any](r *Runner, t Task[S]) error {
	if err := t.check(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tasks[t.Name]; ok {
		return fmt.Errorf("task.Register: a task named %q is registered already; Unregister it first or choose another name", t.Name)
	}
	e := newEntry(t)
	r.tasks[t.Name] = e
	r.op.Telemetry().Emit(telemetry.TaskRegistered{Task: t.Name, Every: t.Every})
	if r.leadCtx != nil {
		r.start(e)
	}
	return nil
}

// Unregister stops the task named name and removes it; a run in flight
// has its context cancelled. It reports whether the task was registered.
func (r *Runner) Unregister(name string) bool {
	if !r.remove(name) {
		return false
	}
	r.op.Telemetry().Emit(telemetry.TaskStopped{Task: name, Reason: telemetry.StoppedByUnregister})
	return true
}

// Tasks returns the names of the registered tasks, sorted.
func (r *Runner) Tasks() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.tasks))
}

// Run runs every task until ctx ends (leadership lost, or shutdown), then
// waits for their loops to stop.
func (r *Runner) Run(ctx context.Context) error {
	r.mu.Lock()
	r.leadCtx = ctx
	for _, e := range r.tasks {
		r.start(e)
	}
	r.mu.Unlock()
	<-ctx.Done()
	r.mu.Lock()
	r.leadCtx = nil
	r.mu.Unlock()
	r.loops.Wait()
	return nil
}

// start runs e's loop; r.mu is held.
func (r *Runner) start(e *entry) {
	ctx, cancel := context.WithCancel(r.leadCtx)
	e.cancel = cancel
	r.loops.Go(func() { r.loop(ctx, e) })
}

func (r *Runner) remove(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.tasks[name]
	if !ok {
		return false
	}
	delete(r.tasks, name)
	if e.cancel != nil {
		e.cancel()
	}
	return true
}

// loop runs e until ctx ends or e stops.
func (r *Runner) loop(ctx context.Context, e *entry) {
	delay := r.interval(e)
	if e.runAtStart {
		delay = 0
	}
	r.op.Telemetry().Emit(telemetry.TaskInitialized{Task: e.name, FirstRunIn: delay})
	failures := 0
	for r.sleep(ctx, delay) {
		start := r.opts.Clock.Now()
		stop, err := e.runOnce(ctx)
		if ctx.Err() != nil {
			return // unregistered or no longer leading: not the task's failure
		}
		r.op.Telemetry().Emit(telemetry.TaskRan{Task: e.name, Duration: r.opts.Clock.Since(start), Err: err})
		switch {
		case err != nil && e.halt:
			r.stopped(e, telemetry.StoppedByError, err)
			return
		case err != nil:
			failures++
			delay = r.backoff(failures)
		case stop:
			r.stopped(e, telemetry.StoppedByTask, nil)
			return
		default:
			failures = 0
			delay = r.interval(e)
		}
	}
}

// interval is e's next interval with the runner's random source.
func (r *Runner) interval(e *entry) time.Duration {
	r.mu.Lock() // Rand need not be safe for concurrent use
	defer r.mu.Unlock()
	return e.interval(r.opts.Rand)
}

func (r *Runner) stopped(e *entry, reason string, err error) {
	r.mu.Lock()
	if r.tasks[e.name] == e {
		delete(r.tasks, e.name)
	}
	r.mu.Unlock()
	r.op.Telemetry().Emit(telemetry.TaskStopped{Task: e.name, Reason: reason, Err: err})
}

// backoff is the delay after the n-th failure in a row.
func (r *Runner) backoff(n int) time.Duration {
	d := r.opts.InitialBackoff
	for i := 1; i < n && d < r.opts.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, r.opts.MaxBackoff)
}

// sleep waits d on the runner's clock; false when ctx ended first.
func (r *Runner) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := r.opts.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}
