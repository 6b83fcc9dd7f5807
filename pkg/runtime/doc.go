// Package runtime runs typed opgen controllers.
//
// An Operator owns the clients, the caches, the controllers, leader
// election, metrics, health and shutdown. Register adds a Controller for a
// Kind, run by a typed plug.Handler. The generated glue of every kind
// calls Register; main calls New and Run, or Main does all of it:
//
//	func main() { runtime.Main(runtime.Options{Name: "hello-operator"}, controller.Setup) }
//
// docs/runtime.md is the manual. This page is the map.
//
// # What lives where
//
//	runtime             Operator, Options, Register, Controller, Kind, Reader, Runnables
//	runtime/builtin     the Kind of each common built-in kind
//	runtime/fleet       one operator in many clusters (docs/multicluster.md)
//	runtime/ctrlbridge  a controller-runtime manager hosting the operator (docs/migrating.md)
//	plug                the Action, the pipeline and its steps
//	telemetry           the typed events every part reports
//	task, scheduler     periodic tasks and a custom scheduler, on the leader
//	webhook             admission and conversion webhooks, on every replica
//	external            the phased reconciler for resources outside the cluster
//	optest, testenv     the test kit and the local control plane
//
// The files follow an event. informers.go holds the kind's informers and
// turns their events into keys on the controller's queue
// (internal/lanes); action.go takes a key, decides the verb (versions.go,
// shard.go, finalize.go, pause.go beside it) and runs the pipeline that
// pipeline.go builds; owned.go is the store through which the pipeline's
// steps write owned objects. controller.go builds a Controller from these
// parts. Every request then leaves through internal/transport, which
// states its layers in order. Under pkg/runtime/internal:
//
//	lanes          the work queue with its lanes: who goes first
//	ownwrites      the operator's own writes, which wake nothing
//	inflight       the keys in flight, named when a shutdown waits too long
//	dispatch       the turns of one kind's versions on its keys (VersionDispatch)
//	owned          the owned objects of a controller owner, in the caches
//	fieldset       the field set of an apply, to tell a restart's no-op
//	cachefill      what the caches keep of managedFields, interning, GC pacing
//	watchjson      watch and patch answers decoded in one pass (Kind's Client, ListWatch)
//	clients        the clients on one HTTP client, and the Leases' connection
//	transport      that HTTP client's one transport: fence, timeout, outage, answers
//	outage         caches that wait out an API server outage, and log it
//	seen           whether the caches saw a write, for the test kit
//	observe        metrics, logs and traces, subscribers of the telemetry
//	serving        /metrics, /healthz, /readyz, pprof and replica servers
//	securemetrics  /metrics over HTTPS, checked by the API server (docs/metrics.md)
//	election       the Lease of one holder, for the leader and for members
//	fence          no writes from a replica whose lease may have passed on
//	shard          buckets, members and the sharder (docs/sharding.md)
//	migration      stored objects moved to the storage version (docs/upgrading.md)
//	preview        every write a dry run, and the report of what it would change
//
// # Words
//
//	object        a Kubernetes object; the controller's objects are of its kind
//	kind          an API kind (Kind[T] describes one to the runtime)
//	controller    runs one kind's handler on its objects (Controller[T])
//	handler       the user's code: Reconcile, and Add, Modify, Delete (plug.Handler)
//	action        one run of the pipeline for one object and verb (plug.Action)
//	step          one stage of the pipeline around the handler (plug.Step)
//	owned object  an object an object owns: its controller owner reference
//	              names it; the handler declares them (Action.Own)
//	lane          a part of the queue: finalize, user and bulk (internal/lanes)
//
// # Controllers
//
// A Controller[T] caches T with an informer per watched namespace. Events
// put keys (namespace/name) into a work queue, and Workers goroutines take
// them. One key is never handled by two workers at once. A key added while
// it is handled is handled again afterwards.
//
// A key wakes on an add, on an update that passes UpdateFilter, on a
// change to an owned or watched object, after RequeueAfter or
// ReconcileEvery, and on a retry. The default UpdateFilter is
// GenerationOrMetadataChanged. Built-in kinds use AnyChange. The
// operator's own writes wake nothing, with one exception: an action whose
// plug.CreateNow, ApplyNow or DeleteNow created or deleted an owned object is
// followed by one more action of its object, at once.
//
// The queue serves what someone changed ahead of bulk work. Objects that
// need their finalizer go first. Then keys woken by an add after the
// initial list, an update, a delete or a change to an owned or watched
// object, and their retries. Then the initial list, periodic reconciles
// and other retries; one of those gets a turn after 8 of the others.
//
// An action runs within ControllerOptions.ActionTimeout, 10 minutes by
// default. At the deadline its context is cancelled (context.Cause names
// it) and it is retried. A handler that ignores it shows in /readyz.
//
// # Verbs
//
// The verb comes from the object's state when a worker takes the key,
// never from the event that woke it:
//
//  0. The object carries PauseAnnotation: nothing runs.
//  1. deletionTimestamp is set: Delete, if the finalizer is on it.
//  2. No generation was handled yet: Add.
//  3. The handled generation differs from metadata.generation: Modify.
//  4. Otherwise: Reconcile.
//
// The handled generation is this process's memory of the last success,
// else status.observedGeneration. Add, Modify and Delete run the handler's
// method of that name when it has one, else Reconcile. A Delete runs
// behind a finalizer, so a deletion is handled even when the operator was
// down.
//
// # After an action
//
// A nil error resets the key's backoff; the key comes back after the
// earlier of Action.RequeueAfter and ReconcileEvery. An error retries the
// key with per-key exponential backoff (ControllerOptions.RateLimiter),
// sets the Degraded condition and records a Warning event.
// plug.Terminal(err) is recorded the same way and not retried. A panic is
// an error.
//
// # Guarantees
//
//   - Writes are server-side applies with the field manager Options.Name.
//     A write that would change nothing is skipped: a steady state makes
//     no API writes.
//   - Whatever others did to an owned object, the next action applies
//     what the handler declared again. Owned objects no longer declared
//     are deleted, with a UID precondition. A restart over converged
//     objects writes nothing: the cache decides, not the process's memory.
//   - After its own write, a handler reads at least what it wrote, through
//     a.Object and the readers, until the cache shows it. An owned object it
//     deleted is gone from the readers at once.
//   - Own writes of owned objects converge. After a successful action whose
//     CreateNow, ApplyNow or DeleteNow created or deleted an owned object, the
//     object is handled once more at once. A status computed from
//     owned objects read before those writes is right after that action; one
//     computed after them is right at once, and the next action writes
//     nothing.
//   - Caches strip managedFields but the operator's own entry. Owned and
//     watched kinds are cached metadata-only, unless a Reader needs them
//     whole.
//   - Leader election is on by default. Caches sync before the lease is
//     won, so a new leader works at once. Shutdown lets handlers finish
//     for ShutdownTimeout, then releases the lease.
//   - /readyz follows the caches and the API server; failures are logged
//     at a bounded rate.
//
// # More
//
// docs/runtime.md has what is cached and written, pausing, leader
// election, readers, namespaces, tracing and the permissions the runtime
// needs. docs/sharding.md covers Options.Sharding, docs/metrics.md the
// metrics, docs/generate.md the RBAC the generator derives, and
// docs/reliability.md each promise with its test.
//
// The package is stable: an incompatible change of its API comes with a
// line in CHANGELOG.md that says how to migrate, and, where it can,
// after a release of deprecation.
package runtime
