// Package external reconciles Kubernetes objects with resources outside
// the cluster (a cloud API, a database, a SaaS), through typed phases in
// the manner of operator-sdk-extra's phased reconciler:
//
//	Configure → Read → (absent: Create | Diff says changed: Update | in sync) → OnSuccess
//	deleted:  Configure → Read → (present: Delete) → OnSuccess → finalizer removed
//	any phase failing → OnError
//
// A Reconciler[T, C, S] implements the phases over the object type T, the
// type C of the data the phases share (made by Configure: a client of the
// external system and whatever one phase leaves for the next) and the type
// S of the resource's actual state; New adapts it to the runtime's
// plug.Handler and plug.Deleter (a Phased):
//
//	_, err := runtime.Register(op, kind, external.New[*v1.Database](databases{}), runtime.ControllerOptions[*v1.Database]{
//		ReconcileEvery: 5 * time.Minute, // Read and Diff again to catch drift
//	})
//
// # Flow
//
// Add, Modify and Reconcile all run the same level-based sync: Configure
// builds a client for the object (credentials, endpoint), Read fetches the
// actual state, and Diff says what to do: Create (the resource does not
// exist, or Diff says NeedCreate: Delete then Create), Update (NeedUpdate)
// or nothing (in sync). Create, Update and Delete return a Result: Done(),
// RequeueAfter(d) to look again after d (a resource still being made), or
// RequeueNow().
// Delete runs when the object is being deleted: Read, then Delete if the
// resource still exists.
//
// After a successful sync, OnSuccess runs: by default it sets Ready=True
// (reason Created, Updated, InSync or Deleted) on objects with conditions
// and emits a Normal event for a Create, an Update (with Diff's list) or
// a Delete. After a failure, OnError runs: by default it returns the error
// wrapped with its phase ("external Create: ..."), and the runtime's
// pipeline sets Degraded=True with the message, emits a Warning event and
// retries with its per-object exponential backoff. Implement ErrorPhase
// or SuccessPhase on the Reconciler to change either.
//
// # operator-sdk-extra
//
// The names map to operator-sdk-extra's remote reconciler as follows:
//
//	operator-sdk-extra                         opgen
//	RemoteReconciler / RemoteReconcilerAction  Reconciler[T, C, S], run by New (Phased)
//	Configure(ctx, req, o) (ctrl.Result, err)  Configure(ctx, obj) (C, error)
//	Read(ctx, o, data map[string]any)          Read(ctx, c, obj) (S, found, error)
//	Diff(...) (diff RemoteDiff, ...)           Diff(obj, actual) Diff{NeedCreate, NeedUpdate, Changes}
//	Create / Update / Delete (ctrl.Result)     Create / Update / Delete (Result, error)
//	OnError / OnSuccess                        ErrorPhase.OnError / SuccessPhase.OnSuccess
//	data map[string]any between phases         C, typed (a pointer to share writes)
//	ctrl.Result{RequeueAfter: d}               RequeueAfter(d)
//	ctrl.Result{Requeue: true}                 RequeueNow()
//	K8sPhaseReconciler                         K8s[T] run by New: the same phases, over owned objects
//	StdK8sReconciler (standard K8s phases)     K8s's Configure/Read/Diff/Create/Update/Delete
//
// K8s (NewK8s) is the Kubernetes phase reconciler: a Reconciler whose
// external system is the API server and whose resources are the objects
// an object owns, run by the same Phased pipeline, not a second framework.
//
// # Guarantees
//
// The runtime keeps its finalizer on every object (New's handler is a
// plug.Deleter), so the external resource is deleted before the object
// goes, even when the object is deleted while the operator is stopped:
// nothing leaks. Create and Update run only when Read and Diff call for
// them, so a steady state makes no writes to the external system. One
// object is never synced by two workers at once.
//
// # Caveats
//
// The external system is read on every action, so every Reconcile costs a
// Read: choose ReconcileEvery accordingly. If Configure or Delete can
// never succeed (the credentials are gone), the object stays Terminating:
// remove the finalizer by hand to give up, and the resource with it. The
// external resource must be found by what the object says (its name, an
// ID kept in its status written by ApplyStatus): an ID known only in
// memory is lost on restart.
//
// The package is stable: an incompatible change of its API comes with a
// line in CHANGELOG.md that says how to migrate, and, where it can,
// after a release of deprecation.
package external
