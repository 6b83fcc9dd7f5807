// Package telemetry is opgen's typed event hook: every part of an operator
// (watches, controllers, the scheduler, periodic tasks, leader election)
// reports what happens to it as a typed Event on the operator's Bus, and
// anyone may Subscribe. The operator's own Prometheus metrics and logs are
// subscribers like any other, so what a dashboard counts is exactly what a
// user's hook sees. docs/parity.md maps Bonny's telemetry events to these.
//
// # Events
//
// Event is a closed sum of structs, one per thing that happened:
//
//	watches      WatchInitialized, WatchChunkReceived, WatchOpened, WatchStarted,
//	             WatchFinished, WatchTimedOut, WatchFailed, WatchRelisted, WatchStopped
//	controllers  ControllerStarted, ControllerStopped,
//	             ReconcileWoken, ReconcileStarted, ReconcileSucceeded, ReconcileFailed, ReconcilePaused,
//	             ReconcileTimedOut, HotLoop
//	scheduler    SchedulerFetchStarted, SchedulerFetchSucceeded, SchedulerFetchFailed,
//	             BindSucceeded, BindFailed
//	tasks        TaskRegistered, TaskInitialized, TaskRan, TaskStopped
//	leadership   LeaderAcquired, LeaderLost
//
// Subscribe to one type with On, or to every event with On[Event] and a
// type switch:
//
//	telemetry.On(op.Telemetry(), func(e telemetry.ReconcileFailed) {
//		alerts.Notify(e.Controller, e.Key, e.Err)
//	})
//
// The operator's metrics count the reconcile, leadership and watch events
// (opgen_watch_events_total{controller,kind,event}); its log writes the
// failures as errors and the routine ones at V(1) and V(2). The scheduler
// and the task runner count theirs in their own metrics.
//
// # Guarantees
//
// Subscribers are called synchronously, on the goroutine that emits, in
// the order they subscribed; events from one goroutine arrive in the order
// they happened (for one object: ReconcileStarted before its
// ReconcileSucceeded or ReconcileFailed, and one object is never handled
// by two workers at once). A subscriber that panics is recovered, so a
// hook cannot break the operator; the panic is reported to the Bus's
// OnPanic function.
//
// # Caveats
//
// A subscriber runs inside the operator's hot path: keep it fast and
// non-blocking (count, log, or hand off to a channel with a default case).
// Events from different goroutines (two workers, two controllers) are not
// ordered with respect to each other.
//
// The package is stable: an incompatible change of its API comes with a
// line in CHANGELOG.md that says how to migrate, and, where it can,
// after a release of deprecation.
package telemetry
