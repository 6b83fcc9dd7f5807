// Package inflight tracks the keys an operator's handlers and Runnables
// work on, so that a shutdown that waits too long can name them, and the
// actions whose handlers are stuck past their timeout.
package inflight

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Set tracks the keys handlers and Runnables work on, to name the
// ones a shutdown leaves behind. Recording costs no allocation: the names
// are formatted only when listed.
type Set struct {
	mu   sync.Mutex
	next uint64
	keys map[uint64]entry
}

type entry struct {
	controller string
	key        cache.ObjectName
}

// Begin records that controller works on key until End is called with
// the id it returns.
func (f *Set) Begin(controller string, key cache.ObjectName) (id uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.keys == nil {
		f.keys = map[uint64]entry{}
	}
	f.next++
	f.keys[f.next] = entry{controller, key}
	return f.next
}

// End records that the work Begin returned id for ended.
func (f *Set) End(id uint64) {
	f.mu.Lock()
	delete(f.keys, id)
	f.mu.Unlock()
}

// List returns "controller key" of everything in flight, sorted.
func (f *Set) List() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.keys))
	for _, e := range f.keys {
		out = append(out, e.controller+" "+e.key.String())
	}
	slices.Sort(out)
	return out
}

// Stuck tracks the actions whose handlers still run a grace period
// after their timeout: they ignore their cancelled context, and their
// workers wait for them.
type Stuck struct {
	mu   sync.Mutex
	by   map[*Action]struct{}
	idle sync.Pool // *Deadline, of actions that ended in time
	// Gauge, when set, counts them by controller.
	Gauge *prometheus.GaugeVec
}

// Action is one action that may get stuck, held in its Deadline (Arm
// makes it). It learns its key only when it is marked, so that an action
// that is never stuck allocates nothing here.
type Action struct {
	s                *Stuck
	controller, key  string
	since            time.Time
	marked, finished bool
}

// Mark records that the action on key is stuck, unless it has finished.
func (a *Action) Mark(key string) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	if a.finished || a.marked {
		return
	}
	a.marked, a.since, a.key = true, time.Now(), key
	if a.s.by == nil {
		a.s.by = map[*Action]struct{}{}
	}
	a.s.by[a] = struct{}{}
	if a.s.Gauge != nil {
		a.s.Gauge.WithLabelValues(a.controller).Inc()
	}
}

// Finish records that the action's handler returned.
func (a *Action) Finish() {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	a.finished = true
	if !a.marked {
		return
	}
	delete(a.s.by, a)
	if a.s.Gauge != nil {
		a.s.Gauge.WithLabelValues(a.controller).Dec()
	}
}

// Err says which actions are stuck and since when, or is nil.
func (s *Stuck) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.by) == 0 {
		return nil
	}
	all := make([]string, 0, len(s.by))
	for a := range s.by {
		all = append(all, fmt.Sprintf("%s %s for %s", a.controller, a.key, time.Since(a.since).Round(time.Second)))
	}
	slices.Sort(all)
	return fmt.Errorf("%d handler(s) stuck past their action timeout, their context cancelled: %s", len(all), strings.Join(all, ", "))
}

// Deadline is one action's ActionTimeout, armed by Stuck.Arm.
type Deadline struct {
	bus    *telemetry.Bus
	cause  timedOut
	held   Action
	ctx    context.Context
	cancel context.CancelFunc
	timer  *time.Timer
	mu     sync.Mutex // orders fire's re-arming with Done
	done   bool       // Done was called: fire reports nothing
	stuck  bool       // the timer fired at the deadline; its next firing ends the grace period
}

// Arm returns ctx with the timeout of controller's action r, and the
// Deadline that reports it on bus: a ReconcileTimedOut at the deadline,
// and another, Stuck, when the action still runs max(timeout/10, 1s)
// after it, which also marks the action stuck. The action calls Done when
// its handler returns.
//
// A Deadline and its timer serve action after action: one whose action
// ended in time is armed again for the next (the timer stopped before it
// fired, so no firing of the past can reach the next action). The cause
// is formatted only when read; the timer fires at the deadline and again
// at the end of the grace period. An action that ends in time, which is
// nearly every action, pays for little more than its context.
func (s *Stuck) Arm(ctx context.Context, bus *telemetry.Bus, controller string, r telemetry.Reconcile, timeout time.Duration) (context.Context, *Deadline) {
	d, _ := s.idle.Get().(*Deadline)
	if d == nil {
		d = &Deadline{}
		d.timer = time.AfterFunc(math.MaxInt64, d.fire) // armed below: fire reads d.timer
	}
	*d = Deadline{bus: bus, cause: timedOut{controller: controller, r: r, timeout: timeout}, held: Action{s: s, controller: controller}, timer: d.timer}
	d.ctx, d.cancel = context.WithTimeoutCause(ctx, timeout, &d.cause)
	d.timer.Reset(timeout)
	return d.ctx, d
}

// Done disarms the deadline and cancels the action's context.
// An action that returns at its deadline, before the timer's firing, is
// reported here: every action whose context ended at its deadline is.
// The Deadline must not be used after Done.
func (d *Deadline) Done() {
	d.mu.Lock()
	d.done = true
	stopped := d.timer.Stop()
	timedOut := context.Cause(d.ctx) == error(&d.cause)
	missed := !d.stuck && timedOut
	reuse := stopped && !d.stuck && !timedOut
	d.mu.Unlock()
	d.held.Finish()
	d.cancel()
	if missed {
		d.bus.Emit(telemetry.ReconcileTimedOut{Reconcile: d.cause.r, Timeout: d.cause.timeout})
	}
	if reuse {
		// In time, the timer never fired: nothing refers to d any more (a
		// context that timed out would, through its cause).
		d.held.s.idle.Put(d)
	}
}

// fire runs on the timer's goroutine, one firing at a time. A firing
// that raced with Done reports nothing and does not re-arm the timer.
func (d *Deadline) fire() {
	d.mu.Lock()
	if d.done {
		d.mu.Unlock()
		return
	}
	e := telemetry.ReconcileTimedOut{Reconcile: d.cause.r, Timeout: d.cause.timeout}
	if d.stuck {
		d.held.Mark(d.cause.r.Key.String())
		e.Stuck = true
	} else {
		d.stuck = true
		d.timer.Reset(max(d.cause.timeout/10, time.Second))
	}
	d.mu.Unlock()
	d.bus.Emit(e)
}

// timedOut is the cause of an action's context cancelled at its deadline.
type timedOut struct {
	controller string
	r          telemetry.Reconcile
	timeout    time.Duration
}

func (e *timedOut) Error() string {
	return fmt.Sprintf("runtime: controller %s: the %s of %s ran past its ActionTimeout of %s: %v", e.controller, e.r.Verb, e.r.Key, e.timeout, context.DeadlineExceeded)
}

func (e *timedOut) Unwrap() error { return context.DeadlineExceeded }
