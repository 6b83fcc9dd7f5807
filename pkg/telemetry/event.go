package telemetry

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// Event is one thing that happened in an operator. It is a closed sum: the
// types in this file are all its cases.
type Event interface {
	// Name is the event's stable name, such as "reconcile.failed", for logs
	// and for systems that key on strings.
	Name() string
	event()
}

// Watch names one watch of one kind in one namespace ("" for all
// namespaces or a cluster-scoped kind), by the controller that runs it.
type Watch struct {
	Controller string
	GVK        schema.GroupVersionKind
	Namespace  string
}

// WatchStarted: the watch's cache has listed every object and is watching.
type WatchStarted struct{ Watch }

// WatchFailed: the watch broke with an error (the connection dropped, the
// resource version expired, RBAC forbids it); client-go backs off and lists
// again, and WatchRelisted follows when the kind's Kind has ListWatch.
type WatchFailed struct {
	Watch
	Err error
}

// WatchRelisted: the watch listed every object again, after a failure or
// an expired resource version. Objects changed in between are handled from
// their state, so nothing is lost.
type WatchRelisted struct {
	Watch
	// Objects is how many objects the list returned.
	Objects int
}

// WatchInitialized: the watch's informer was made; it lists and watches
// when the operator runs.
type WatchInitialized struct{ Watch }

// WatchChunkReceived: one page of a list arrived (the whole list when the
// server does not page it). Objects is how many objects the page held;
// More is true when another page follows.
type WatchChunkReceived struct {
	Watch
	Objects int
	More    bool
}

// WatchOpened: the server accepted a watch request and streams its
// changes. Every watch after a list, a timeout or a failure opens anew.
type WatchOpened struct{ Watch }

// WatchFinished: the server ended a watch stream before its timeout
// without an error (a restart, a load balancer); client-go opens another.
type WatchFinished struct {
	Watch
	Duration time.Duration
}

// WatchTimedOut: a watch stream ended at the timeout client-go asked for
// (a random 5 to 10 minutes); client-go opens another. Routine.
type WatchTimedOut struct {
	Watch
	Timeout time.Duration
}

// WatchStopped: the watch stopped for good because its informer stopped
// (the operator shut down).
type WatchStopped struct{ Watch }

// Workers names one controller's workers.
type Workers struct {
	Controller string
	// Count is how many workers the controller runs.
	Count int
}

// ControllerStarted: the controller's workers started taking keys (this
// replica leads and the caches synced).
type ControllerStarted struct{ Workers }

// ControllerStopped: the controller's workers all returned (leadership
// ended or the operator shut down).
type ControllerStopped struct{ Workers }

// Reconcile names one action of one controller on one object.
type Reconcile struct {
	Controller string
	Key        cache.ObjectName
	// Verb is "Add", "Modify", "Reconcile" or "Delete" (plug.Verb).
	Verb string
	// ID identifies the action in logs (the reconcileID value) and traces.
	ID string
}

// ReconcileStarted: a worker took the key and the pipeline starts.
type ReconcileStarted struct{ Reconcile }

// ReconcileSucceeded: the whole pipeline returned nil.
type ReconcileSucceeded struct {
	Reconcile
	Duration time.Duration
	// RequeueAfter is when the object comes back without a change (the
	// earlier of the handler's RequeueAfter and the controller's period);
	// 0 for never.
	RequeueAfter time.Duration
}

// ReconcileFailed: the pipeline returned an error; Terminal errors are not
// retried, others come back after the key's backoff.
type ReconcileFailed struct {
	Reconcile
	Duration time.Duration
	Err      error
	Terminal bool
	// Unknown says the action stopped with the operator (it stopped
	// leading, or shuts down) or its write was refused before it was
	// sent (plug.OutcomeUnknown): whether its last write was stored is
	// not known, and it is no failure of the object's.
	Unknown bool
}

// ReconcilePaused: the object carries the pause annotation, so no handler
// ran.
type ReconcilePaused struct{ Reconcile }

// ReconcileTimedOut: an action ran past its controller's ActionTimeout and
// its context was cancelled. Stuck is false at the deadline, and true
// once the action still ran a grace period later: the handler ignores its
// context, and its worker waits for it.
type ReconcileTimedOut struct {
	Reconcile
	Timeout time.Duration
	Stuck   bool
}

// Binding names one pod a scheduler placed or tried to place.
type Binding struct {
	Scheduler string
	Pod       cache.ObjectName
}

// BindSucceeded: the pod was bound to Node.
type BindSucceeded struct {
	Binding
	Node     string
	Duration time.Duration
}

// BindFailed: no node was chosen (Unschedulable: none fits) or the binding
// failed; the pod is tried again after its backoff.
type BindFailed struct {
	Binding
	Err           error
	Unschedulable bool
	Duration      time.Duration
}

// Fetch names one read of a scheduler: the candidate nodes of one pod,
// or a page of the pods waiting for it.
type Fetch struct {
	Scheduler string
	// Resource is FetchNodes or FetchPods.
	Resource string
}

// What a scheduler fetches.
const (
	FetchNodes = "nodes"
	FetchPods  = "pods"
)

// SchedulerFetchStarted: the scheduler started reading Resource.
type SchedulerFetchStarted struct{ Fetch }

// SchedulerFetchSucceeded: the scheduler read Objects objects.
type SchedulerFetchSucceeded struct {
	Fetch
	Objects  int
	Duration time.Duration
}

// SchedulerFetchFailed: the read failed; the pod (or the pod watch) is
// tried again after its backoff.
type SchedulerFetchFailed struct {
	Fetch
	Err error
}

// TaskRegistered: a periodic task was added to its runner.
type TaskRegistered struct {
	Task  string
	Every time.Duration
}

// TaskInitialized: a task's loop started (it was registered while this
// replica leads, or this replica started leading); its first run follows
// at once (RunAtStart) or after its interval.
type TaskInitialized struct {
	Task string
	// FirstRunIn is the delay before the first run.
	FirstRunIn time.Duration
}

// TaskRan: a periodic task ran once. Err is nil when it succeeded.
type TaskRan struct {
	Task     string
	Duration time.Duration
	Err      error
}

// Reasons a task stops.
const (
	// StoppedByTask: the task returned its Stop result.
	StoppedByTask = "Stopped"
	// StoppedByUnregister: the task was unregistered.
	StoppedByUnregister = "Unregistered"
	// StoppedByError: the task failed and its OnError is Halt.
	StoppedByError = "Failed"
)

// TaskStopped: a periodic task will not run again in this process.
type TaskStopped struct {
	Task string
	// Reason is StoppedByTask, StoppedByUnregister or StoppedByError.
	Reason string
	// Err is the error that halted the task (StoppedByError).
	Err error
}

// Leadership names the lease and this replica.
type Leadership struct {
	// Lease is namespace/name of the Lease; empty when election is off.
	Lease    string
	Identity string
}

// LeaderAcquired: this replica leads and its workers start.
type LeaderAcquired struct{ Leadership }

// LeaderLost: this replica stopped leading. Graceful is true after a
// shutdown (the lease is released), false when renewal failed.
type LeaderLost struct {
	Leadership
	Graceful bool
}

// ShardMoved: with sharding, a bucket of objects changed hands. The
// sharder (on the leader) reports Verb "assign" (an unassigned bucket to
// To; From is the member it was drained from, if any), "drain" (taken
// from the live member From, which lets go first) and "reassign" (From's
// Lease expired: to To at once); a member reports "release" (it let go of
// a bucket drained from it) and "take" (it started on a bucket assigned
// to it). Handover is, for an assign that ends a drain, the time since the
// drain.
type ShardMoved struct {
	Bucket   int
	Verb     string
	From, To string
	Handover time.Duration
}

func (ShardMoved) Name() string { return "shard.moved" }
func (ShardMoved) event()       {}

func (WatchStarted) Name() string            { return "watch.started" }
func (WatchFailed) Name() string             { return "watch.failed" }
func (WatchRelisted) Name() string           { return "watch.relisted" }
func (ReconcileStarted) Name() string        { return "reconcile.started" }
func (ReconcileSucceeded) Name() string      { return "reconcile.succeeded" }
func (ReconcileFailed) Name() string         { return "reconcile.failed" }
func (ReconcilePaused) Name() string         { return "reconcile.paused" }
func (ReconcileTimedOut) Name() string       { return "reconcile.timedout" }
func (BindSucceeded) Name() string           { return "scheduler.bind.succeeded" }
func (BindFailed) Name() string              { return "scheduler.bind.failed" }
func (TaskRan) Name() string                 { return "task.ran" }
func (TaskStopped) Name() string             { return "task.stopped" }
func (LeaderAcquired) Name() string          { return "leader.acquired" }
func (LeaderLost) Name() string              { return "leader.lost" }
func (WatchInitialized) Name() string        { return "watch.initialized" }
func (WatchChunkReceived) Name() string      { return "watch.chunk.received" }
func (WatchOpened) Name() string             { return "watch.opened" }
func (WatchFinished) Name() string           { return "watch.finished" }
func (WatchTimedOut) Name() string           { return "watch.timedout" }
func (WatchStopped) Name() string            { return "watch.stopped" }
func (ControllerStarted) Name() string       { return "controller.started" }
func (ControllerStopped) Name() string       { return "controller.stopped" }
func (SchedulerFetchStarted) Name() string   { return "scheduler.fetch.started" }
func (SchedulerFetchSucceeded) Name() string { return "scheduler.fetch.succeeded" }
func (SchedulerFetchFailed) Name() string    { return "scheduler.fetch.failed" }
func (TaskRegistered) Name() string          { return "task.registered" }
func (TaskInitialized) Name() string         { return "task.initialized" }

func (WatchStarted) event()            {}
func (WatchFailed) event()             {}
func (WatchRelisted) event()           {}
func (ReconcileStarted) event()        {}
func (ReconcileSucceeded) event()      {}
func (ReconcileFailed) event()         {}
func (ReconcilePaused) event()         {}
func (ReconcileTimedOut) event()       {}
func (BindSucceeded) event()           {}
func (BindFailed) event()              {}
func (TaskRan) event()                 {}
func (TaskStopped) event()             {}
func (LeaderAcquired) event()          {}
func (LeaderLost) event()              {}
func (WatchInitialized) event()        {}
func (WatchChunkReceived) event()      {}
func (WatchOpened) event()             {}
func (WatchFinished) event()           {}
func (WatchTimedOut) event()           {}
func (WatchStopped) event()            {}
func (ControllerStarted) event()       {}
func (ControllerStopped) event()       {}
func (SchedulerFetchStarted) event()   {}
func (SchedulerFetchSucceeded) event() {}
func (SchedulerFetchFailed) event()    {}
func (TaskRegistered) event()          {}
func (TaskInitialized) event()         {}

var (
	_ Event = WatchStarted{}
	_ Event = WatchFailed{}
	_ Event = WatchRelisted{}
	_ Event = ReconcileStarted{}
	_ Event = ReconcileSucceeded{}
	_ Event = ReconcileFailed{}
	_ Event = ReconcilePaused{}
	_ Event = BindSucceeded{}
	_ Event = BindFailed{}
	_ Event = TaskRan{}
	_ Event = TaskStopped{}
	_ Event = LeaderAcquired{}
	_ Event = LeaderLost{}
	_ Event = WatchInitialized{}
	_ Event = WatchChunkReceived{}
	_ Event = WatchOpened{}
	_ Event = WatchFinished{}
	_ Event = WatchTimedOut{}
	_ Event = WatchStopped{}
	_ Event = ControllerStarted{}
	_ Event = ControllerStopped{}
	_ Event = SchedulerFetchStarted{}
	_ Event = SchedulerFetchSucceeded{}
	_ Event = SchedulerFetchFailed{}
	_ Event = TaskRegistered{}
	_ Event = TaskInitialized{}
)
