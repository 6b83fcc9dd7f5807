// Package telemetry is opgen's typed event hook: every part of an operator
// (watches, controllers, the scheduler, periodic tasks, leader election)
// reports what happens to it as a typed Event on the operator's Bus, and
// anyone may Subscribe. The operator's own Prometheus metrics and logs are
// subscribers like any other, so what a dashboard counts is exactly what a
// user's hook sees. It is Bonny's :telemetry events, typed.
//
// # Events
//
// Event is a closed sum of structs, one per thing that happened:
//
//	watches      WatchInitialized, WatchChunkReceived, WatchOpened, WatchStarted,
//	             WatchFinished, WatchTimedOut, WatchFailed, WatchRelisted, WatchStopped
//	controllers  ControllerStarted, ControllerStopped,
//	             ReconcileStarted, ReconcileSucceeded, ReconcileFailed, ReconcilePaused
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
// # Bonny's events
//
// Every event of Bonny's Bonny.Sys.Event (v0.4) has a typed counterpart:
//
//	Bonny [:bonny, ...]                    opgen
//	watcher initialized                    WatchInitialized
//	watcher watch started                  WatchStarted (the first list done, watching)
//	watcher watch succeeded                WatchOpened (each watch the server accepts)
//	watcher watch finished                 WatchFinished
//	watcher watch failed                   WatchFailed
//	watcher watch timedout                 WatchTimedOut
//	watcher chunk received                 WatchChunkReceived
//	watcher genserver down                 WatchStopped
//	reconciler initialized                 ControllerStarted
//	reconciler fetch succeeded             WatchChunkReceived, WatchRelisted (reads come from the cache these lists fill)
//	reconciler fetch failed                WatchFailed
//	reconciler run started                 ReconcileStarted
//	reconciler reconcile succeeded         ReconcileSucceeded
//	reconciler reconcile failed            ReconcileFailed
//	reconciler genserver down              ControllerStopped
//	scheduler pods fetch succeeded         SchedulerFetchSucceeded{Resource: FetchPods}
//	scheduler pods fetch failed            SchedulerFetchFailed{Resource: FetchPods}
//	scheduler nodes fetch succeeded        SchedulerFetchSucceeded{Resource: FetchNodes}
//	scheduler nodes fetch failed           SchedulerFetchFailed{Resource: FetchNodes}
//	(no Bonny event: nodes fetch start)    SchedulerFetchStarted{Resource: FetchNodes}
//	scheduler binding succeeded            BindSucceeded
//	scheduler binding failed               BindFailed
//	task initialized                       TaskInitialized
//	task registered                        TaskRegistered
//	task unregistered                      TaskStopped{Reason: StoppedByUnregister}
//	task succeeded                         TaskRan with a nil Err
//	task failed                            TaskRan with Err (and TaskStopped{Reason: StoppedByError} with OnError Halt)
//	task stopped                           TaskStopped{Reason: StoppedByTask}
//
// Bonny 1.x replaced these with :telemetry spans ([:reconciler, :reconcile],
// [:watcher, :watch], [:scheduler, :binding], [:task, :execution], each
// :start, :stop, :exception): ReconcileStarted/Succeeded/Failed,
// WatchOpened/Finished/Failed, BindSucceeded/Failed and TaskRan cover them;
// durations are in the events' Duration fields.
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
package telemetry
