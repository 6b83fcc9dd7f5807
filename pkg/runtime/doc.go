// Package runtime runs typed opgen controllers. An Operator owns the REST
// config, the caches, the controllers, leader election, metrics, health and
// shutdown; Register adds a controller for a Kind with a typed
// plug.Handler. Users write the handler's Reconcile method (and, when they
// need them, Add, Modify or Delete: see Verbs); generated glue builds the
// Kind and calls Register; the runtime makes the methods correct and cheap.
//
// # An operator's main
//
//	func main() {
//		opts := runtime.Options{Name: "hello-operator"}
//		opts.BindFlags(flag.CommandLine)
//		kubeconfig := flag.String("kubeconfig", "", "path to a kubeconfig; default: in-cluster or ~/.kube/config")
//		flag.Parse()
//		cfg, err := runtime.LoadConfig(*kubeconfig)
//		exitOn(err)
//		op, err := runtime.New(cfg, opts)
//		exitOn(err)
//		exitOn(controller.Setup(op)) // generated: one runtime.Register per kind
//		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
//		defer stop()
//		exitOn(op.Run(ctx))
//	}
//
// # Controllers
//
// A Controller[T] is fed by an informer of T, built from Kind.ListWatch, in
// each watched namespace. Informer events put keys (namespace/name) into
// client-go's typed rate-limited work queue; Workers goroutines take keys
// from it. The queue never hands one key to two workers at once, and a key
// added while it is being handled is handled again afterwards, so no change
// is missed and no object is handled concurrently. When the handler
// implements plug.Deleter, the queue takes first the keys whose object
// lacks the finalizer, and a worker adds just the finalizer for them
// (queuing the object's first action in turn): a new object is protected
// before any other queued work runs, so one deleted while its first action
// waits still gets its Delete.
//
// What wakes a key:
//
//   - an add of the object; an update that passes UpdateFilter (default:
//     generation, deletion timestamp, finalizers, labels or annotations
//     changed — not status-only or resourceVersion-only changes, so the
//     operator's own status writes do not wake it);
//   - an add, update or delete of an owned object (its controller owner
//     reference names the key) or of a watched object (Watch.Map names the
//     keys);
//   - the end of a RequeueAfter delay or of the ReconcileEvery period after
//     the last successful handling (a timer on the queue, not a relist);
//   - a retry after a failure, with per-key exponential backoff
//     (ControllerOptions.RateLimiter).
//
// # Verbs
//
// The verb comes from the object's state when a worker takes the key, never
// from the event that woke it, so the rules hold across restarts, missed
// events and merged events:
//
//  0. the object carries PauseAnnotation (opgen.dev/paused: "true"): no
//     verb runs (see Pausing).
//  1. deletionTimestamp set: Delete if the controller's finalizer is on the
//     object, else nothing (the object is not ours to hold). A handler that
//     does not implement plug.Deleter still gets the finalizer removed.
//  2. no record of a handled generation: Add.
//  3. the record differs from metadata.generation: Modify.
//  4. otherwise: Reconcile.
//
// The verb picks the handler's method (plug.Delegate): Add runs the
// handler's Add when it implements plug.Adder, Modify its Modify when it
// implements plug.Modifier, Delete its Delete when it implements
// plug.Deleter; every other verb but Delete runs Reconcile, with
// Action.Verb still saying which verb it is. A handler with Reconcile alone
// is complete.
//
// The record of the last handled generation is this process's memory of its
// last successful action on the object (same UID), else
// status.observedGeneration when the type implements
// apis.ObservedGenerationObject (generated for kinds whose status has the
// field), where the ApplyStatus step writes it. For kinds without it, the
// record is only in memory: the first sight of an object in a process is
// an Add (after a restart, every existing object gets Add again), and kinds
// without metadata.generation (ConfigMap) never get Modify. An action
// "succeeds" when the whole pipeline returned nil; only then is the record
// advanced, so a failed Add is retried as Add.
//
// What happens after an action:
//
//   - nil: the backoff of the key is reset; the key comes back after the
//     earlier of Action.RequeueAfter and ReconcileEvery (if any).
//   - an error: the key comes back after its backoff (5ms, doubling, up to
//     1000s by default); the Degraded condition, a Warning event and
//     opgen_reconcile_errors_total record it.
//   - plug.Terminal(err): recorded the same way, not retried and not
//     requeued; the next change to the object, to an owned object, or a
//     restart starts over.
//
// A handler panic is recovered and handled as an error.
//
// # Pausing
//
// Every controller honours PauseAnnotation: while an object carries
// opgen.dev/paused: "true", no handler runs for it, Delete included (a
// deleted object stays Terminating, held by the finalizer, until the
// annotation goes), and nothing is requeued. The runtime emits a Normal
// event Paused once per pause and, when the kind implements
// apis.ConditionsObject, sets the Paused condition True with a status
// write of its own (only when it changes; observedGeneration is left
// alone, so no change is lost). Removing the annotation is an annotation
// change, which wakes the object: the action that follows has the verb
// its state calls for (Add if it was never handled, Modify if its spec
// moved, Delete if it is being deleted), emits a Normal event Resumed and
// sets Paused False.
//
// # The pipeline
//
// Each action runs through a plug.Pipeline; by default plug.Default:
//
//	Logger → RecordEvents → AddMissingGVK → Finalizer → ApplyStatus →
//	ApplyDescendants → ManagedByLabel → Delegate(handler)
//
// ControllerOptions.Steps adds steps just before Delegate;
// ControllerOptions.Pipeline replaces the pipeline (setting both is an
// error: the steps then belong in the pipeline Pipeline returns). See package plug for
// each step's flow, guarantees and caveats.
//
// # What is cached
//
// Every cache strips metadata.managedFields but the operator's own apply
// entry (Options.KeepManagedFields keeps them all). The controller's own kind is cached in full through its typed
// informer; handlers receive a deep copy (Action.Object) and may read the
// cached original (Action.Observed) without copying. Owned and watched
// kinds are cached metadata-only (labels, annotations, owner references,
// generation: enough to map events and to skip unchanged applies), shared
// by every controller of the operator, unless the handler reads the kind
// through a Reader (below), in which case that full informer is used.
// Caches start and sync before leader election, so a new leader works at
// once.
//
// # What is written, and when
//
// Every create and update is a server-side apply with the field manager
// Options.Name, and every write that would change nothing is skipped, so a
// steady state makes no API writes other than the leader's lease renewals
// (opgen_api_writes_total counts the rest):
//
//   - the finalizer, once per object, before its first Add, when the
//     handler implements plug.Deleter; removed after Delete succeeded;
//   - the status subresource, when the JSON of the status differs from the
//     cached status (and from the operator's last write while the cache
//     catches up);
//   - descendants, when the live object no longer holds what the operator
//     declared: its body's hash changed, or the operator's own
//     managedFields entry changed since its last apply (a foreign edit, a
//     lost annotation, drift while the operator was down); owned objects no
//     longer declared are deleted (UID precondition);
//   - Events (events.k8s.io), merged into series by client-go;
//   - the leader election Lease, renewed every RetryPeriod by the leader.
//
// # Leader election
//
// On by default, with a coordination.k8s.io Lease named Options.Name in the
// operator's namespace (OPGEN_POD_NAMESPACE). The caches run on every
// replica; only the leader's workers run. A standby watches the Lease (when
// its RBAC allows watch; else it polls every RetryPeriod) and takes it as
// soon as it is released or expires. On graceful shutdown the leader stops
// taking keys, lets in-flight handlers finish (up to ShutdownTimeout), then
// releases the Lease, so handover takes milliseconds and two replicas never
// handle objects at the same time. A leader that cannot renew within
// RenewDeadline cancels its handlers at once and Run returns
// ErrLostLeadership, before the lease can expire for the others.
//
// # Sharding
//
// With Options.Sharding (--sharding) every replica works, each on its
// share of every controller's objects, and caches only that share. Each
// object is in one of 64 buckets, a hash of its key, which the leader's
// sharder writes once as the label shard.opgen.dev/<operator>=<bucket>
// (ApplyDescendants puts descendants in their owner's bucket). The sharder
// assigns the buckets to the live members, each holding a member Lease
// (<lease>-member-<member>), by consistent hashing with bounded loads, so a
// replica joining or leaving moves about 1/N of them; the assignment is
// an annotation of the Lease <lease>-shards. A member caches each bucket
// it holds with label-selected informers of the controlled and owned kinds
// (watched kinds are cached whole). A move between live members is a
// handover: the sharder unassigns the bucket, the member lets no new
// action start on its objects, waits for those in flight, drops its
// caches and reports it in its Lease, and only then is the bucket assigned
// again; no two replicas handle an object at once. A replica that cannot
// renew its member Lease stops working and Run returns ErrLostMembership;
// its buckets move once the Lease expired, without a write to any object.
// Every replica follows the member Leases and the unlabelled objects from
// its start, so a replica that becomes leader assigns at once.
// A replica that shuts down releases its Lease after its workers drained,
// and its buckets move at once. Runnables (periodic tasks, the scheduler)
// stay on the leader. The metrics opgen_shard_objects, opgen_shard_buckets,
// opgen_shard_members, opgen_shard_moves_total and
// opgen_shard_handover_seconds, and telemetry.ShardMoved, report it.
// docs/sharding.md has the sizing.
//
// # Built-in kinds
//
// Package builtin has the Kind of every common built-in kind, built on
// client-go's typed clients:
//
//	_, err := runtime.Register(op, builtin.Pods(op, builtin.Options{}), podPrinter{}, runtime.ControllerOptions[*corev1.Pod]{})
//
// Their controllers run exactly like those of custom kinds, with one
// difference of default: their UpdateFilter is AnyChange, so status
// changes made by the cluster (a Pod turning Running) wake the handler
// with Reconcile.
//
// # Reading other objects
//
// A handler reads other built-in kinds through a Reader[T], a typed view
// of a cache the operator starts and syncs in its watched namespaces. The
// markers +opgen:controller:reads=apps/v1.Deployment (and owns, for a
// built-in kind) make the generated New<Kind>Readers(op) return one per
// kind, and derive the get, list and watch RBAC:
//
//	deployments := controller.NewGreetingReaders(op).Deployments()
//	d, err := deployments.Get(ns, name)
//
// A reader is asked for before Run (in the handler's constructor); its
// informer is started with the others.
//
// # Namespaces
//
// Options.Namespaces, the --watch-namespace flag or OPGEN_WATCH_NAMESPACE
// ("all" or a comma-separated list) choose the watched namespaces; one
// informer per kind and namespace. Cluster-scoped kinds are watched
// cluster-wide.
//
// # Telemetry and tracing
//
// Operator.Telemetry is a typed event bus (package telemetry): watches
// started, failed and relisted; actions started, succeeded, failed and
// paused; leadership acquired and lost; and the events of the scheduler
// and of periodic tasks. The Prometheus metrics and the logs below are
// subscribers of it, and so can a user's hook be:
//
//	telemetry.On(op.Telemetry(), func(e telemetry.ReconcileFailed) { ... })
//
// With Options.TracerProvider set, each action is an OpenTelemetry span
// (SpanReconcile) with a child span per pipeline step (SpanStep), nested
// as the steps are; without it tracing costs nothing.
//
// # Leader-only work
//
// Operator.AddLeaderRunnable runs a Runnable beside the controllers while this replica
// leads; periodic tasks (package task) are one.
//
// # Observability
//
// /metrics (Options.MetricsAddr) serves the operator's own Prometheus
// registry: opgen_reconcile_total, opgen_reconcile_duration_seconds and
// opgen_reconcile_errors_total by controller and verb,
// opgen_workqueue_* (depth, adds, queue and work durations, retries,
// unfinished work) by controller, opgen_api_writes_total, opgen_leader,
// client-go's rest_client_* (requests by code, method and host, their
// latency, rate limiter waits, retries) and the Go and process
// collectors. It is HTTPS by default, served only to bearer tokens the API
// server authenticates and authorizes to get /metrics
// (Options.MetricsInsecure serves plain HTTP). /healthz answers while the process runs,
// /readyz once the caches synced (Options.HealthAddr). Logs go through logr
// with the controller, namespace, name, verb and a reconcile ID on every
// line of an action.
//
// # Permissions
//
// The runtime needs exactly: get, list, watch, patch on the controller's
// kind; get, patch, update on its status; update on its finalizers; get,
// list, watch, create, patch, delete on owned kinds; list and watch on
// watched kinds; create and patch on events.k8s.io events; get, create,
// update on coordination.k8s.io leases in the operator's namespace (watch
// too for the fastest handover); discovery. Pausing needs nothing more
// (the Paused condition is a status patch, its events are events).
// Telemetry, tracing and Runnables need no permissions.
package runtime
