// Package task runs periodic tasks in an opgen operator: named functions
// that run on an interval with jitter. Each carries a state of its own
// type from one run to the next, and runs only on the leader.
// docs/parity.md maps Bonny's PeriodicTask to it.
//
//	tasks, err := task.NewRunner(op, task.Options{})
//	err = task.Register(tasks, task.Task[int]{
//		Name:  "count-widgets",
//		Every: time.Minute,
//		Run: func(ctx context.Context, seen int) (task.Result[int], error) {
//			n, err := countWidgets(ctx)
//			if err != nil {
//				return task.Result[int]{}, err // retried with backoff, counted
//			}
//			if n == 0 {
//				return task.Stop[int](), nil // never again
//			}
//			return task.Continue(seen + n), nil // again after Every, with a new state
//		},
//		OnError: task.Backoff, // or task.Halt: stop the task on its first failure
//	})
//
// # Flow
//
// A Runner is a runtime.Runnable: it runs its tasks while the operator
// leads and stops them when it does not. Each task runs first after Every
// (at once with RunAtStart), then Every after the end of each successful
// run, plus a random jitter of up to Jitter×Every. A run that returns an
// error (or panics) is retried after a backoff that starts at
// Options.InitialBackoff and doubles up to Options.MaxBackoff, with the
// state it had (OnError Backoff, the default). With OnError Halt it ends
// the task. Continue(s) replaces the state, Keep() keeps it, Stop() ends
// the task. The jitter's random numbers come from Options.Rand, so a test
// can fix them. Tasks are registered and unregistered at any time, before
// or during Run.
//
// # Guarantees
//
// One task never runs twice at once, and never on a replica that does not
// lead. Tasks are reported as telemetry events (telemetry.TaskRegistered,
// TaskInitialized, TaskRan, TaskStopped), which also feed the metrics
// opgen_task_runs_total{task,result} (result: success, error) and
// opgen_task_duration_seconds{task}. Time comes from Options.Clock, so
// tests step a fake clock instead of sleeping.
//
// # Caveats
//
// The state lives in the process: after a restart or a handover to
// another replica a task starts again from Task.State. A run in flight
// when leadership ends has its context cancelled. Tasks need no
// permissions of their own, only what their functions call.
//
// The package is stable: an incompatible change of its API comes with a
// line in CHANGELOG.md that says how to migrate, and, where it can,
// after a release of deprecation.
package task
