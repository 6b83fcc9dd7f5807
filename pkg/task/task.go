package task

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Result says what happens after a run: Continue, Keep or Stop. The zero
// Result is Keep.
type Result[S any] struct {
	state S
	set   bool
	stop  bool
}

// Continue runs the task again after its interval, with state as its new
// state.
func Continue[S any](state S) Result[S] { return Result[S]{state: state, set: true} }

// Keep runs the task again after its interval with its state unchanged.
func Keep[S any]() Result[S] { return Result[S]{} }

// Stop ends the task: it is unregistered and never runs again.
func Stop[S any]() Result[S] { return Result[S]{stop: true} }

// ErrorPolicy says what a failed run (an error or a panic) does to its
// task.
type ErrorPolicy int

const (
	// Backoff retries the run after the Runner's backoff, with the same
	// state. The default.
	Backoff ErrorPolicy = iota
	// Halt stops the task when its function fails: it is unregistered,
	// and telemetry.TaskStopped says why
	// (StoppedByError, with the error).
	Halt
)

// Task is a named periodic function with a state of type S.
type Task[S any] struct {
	// Name identifies the task in Unregister, logs, metrics and events.
	// Required, unique in its Runner.
	Name string
	// Every is the interval between the end of a run and the start of the
	// next. Required, positive.
	Every time.Duration
	// Jitter adds a random delay of up to Jitter×Every to each interval,
	// so that tasks of many operators do not run in lockstep. Default 0;
	// at most 1.
	Jitter float64
	// RunAtStart runs the task as soon as it is registered or this
	// replica starts leading, instead of after Every.
	RunAtStart bool
	// OnError is what a failed run does: Backoff (the default) or Halt.
	OnError ErrorPolicy
	// State is the state of the first run.
	State S
	// Run runs the task once with the current state. It returns
	// Continue(newState), Keep(), Stop(), or an error: the run is retried
	// after a backoff with the same state, or the task halts (OnError). ctx is cancelled when the replica stops
	// leading or the task is unregistered.
	Run func(ctx context.Context, state S) (Result[S], error)
}

func (t Task[S]) check() error {
	switch {
	case t.Name == "":
		return errors.New("task.Register: Task.Name is empty; name the task")
	case t.Every <= 0:
		return fmt.Errorf("task.Register: task %s: Every is %s; set a positive interval", t.Name, t.Every)
	case t.Jitter < 0 || t.Jitter > 1:
		return fmt.Errorf("task.Register: task %s: Jitter is %g; use a fraction between 0 and 1", t.Name, t.Jitter)
	case t.Run == nil:
		return fmt.Errorf("task.Register: task %s: Run is nil", t.Name)
	case t.OnError != Backoff && t.OnError != Halt:
		return fmt.Errorf("task.Register: task %s: OnError is %d; use task.Backoff or task.Halt", t.Name, t.OnError)
	}
	return nil
}

// entry is a registered task with its type erased: its function closes
// over the task's state.
type entry struct {
	name       string
	every      time.Duration
	jitter     float64
	runAtStart bool
	halt       bool // OnError is Halt
	run        func(ctx context.Context) (stop bool, err error)
	cancel     context.CancelFunc // of the running loop, while leading
}

func newEntry[S any](t Task[S]) *entry {
	state := t.State
	return &entry{
		name: t.Name, every: t.Every, jitter: t.Jitter, runAtStart: t.RunAtStart, halt: t.OnError == Halt,
		run: func(ctx context.Context) (bool, error) {
			res, err := t.Run(ctx, state)
			if err != nil {
				return false, err
			}
			if res.set {
				state = res.state
			}
			return res.stop, nil
		},
	}
}

// interval is Every plus rand()×Jitter×Every; rand returns a number in
// [0, 1).
func (e *entry) interval(rand func() float64) time.Duration {
	return e.every + time.Duration(rand()*e.jitter*float64(e.every))
}

// runOnce runs e, turning a panic into an error.
func (e *entry) runOnce(ctx context.Context) (stop bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("task %s panicked: %v", e.name, p)
		}
	}()
	return e.run(ctx)
}
