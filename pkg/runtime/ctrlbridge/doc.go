// Package ctrlbridge runs an opgen operator inside a controller-runtime
// manager, so that a kubebuilder project moves its controllers to opgen
// one at a time, in one binary. Only adopters import it: an operator built
// on opgen alone links no controller-runtime.
//
// The manager hosts the operator, because it already holds what a process
// has one of: the leader election Lease, /metrics, /healthz and /readyz,
// and the shutdown on SIGTERM. The operator runs as one of its Runnables:
//
//   - election: the Runnable starts with the manager's caches, before the
//     election, so the operator's caches fill on every replica; its workers
//     start when the manager is elected (Manager.Elected). The operator
//     holds no Lease of its own.
//   - metrics: the operator's registry is gathered into controller-runtime's
//     metrics.Registry, which the manager serves on its /metrics; the Go
//     and process series are the manager's.
//   - probes: /readyz has a check "opgen" (the operator's caches synced, the
//     API server answers, its ready checks pass) and /healthz one of the
//     same name (its health checks).
//   - shutdown: the manager stops its Runnables before it releases the
//     Lease; the operator stops taking keys and lets its in-flight handlers
//     finish within Options.ShutdownTimeout, as on its own.
//
// controller-runtime's metrics.Registry is global: run one hosted
// operator per process at a time, as a replica is. Its series leave the
// registry when it stops.
//
// The two runtimes keep caches of their own. A kind both watch is cached
// twice; docs/migrating.md shows what that costs. Moving a controller's
// kind to opgen moves its cache with it.
//
//	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{...})
//	op, err := ctrlbridge.New(mgr, runtime.Options{Name: "guestbook"})
//	err = controller.Setup(op) // the generated glue of the opgen controllers
//	err = mgr.Start(ctrl.SetupSignalHandler())
package ctrlbridge
