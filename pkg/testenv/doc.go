// Package testenv runs a local Kubernetes control plane for tests and for
// `opgen dev`: etcd, kube-apiserver and optionally kube-controller-manager,
// built from Go modules by internal/controlplane (no Docker, no downloaded
// binaries).
//
// # Lifecycle
//
// New returns an Environment; Start starts it on free loopback ports in a
// temporary directory, waits for /readyz, writes a kubeconfig and installs
// CRDs; Stop stops the controller manager, the apiserver and etcd, in that
// order. A test package uses one environment for all its tests:
//
//	var env = testenv.New(testenv.Options{CRDDirs: []string{"testdata/crd"}})
//
//	func TestMain(m *testing.M) { env.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		ns := env.Namespace(t) // a namespace of the test's own
//		...
//	}
//
// # One control plane for many test packages
//
// Main (and optest's Kit) start with StartShared: the first test package
// of a `go test ./...` run starts a shared control plane, and every later
// package, in this run or the next ones, joins it in milliseconds instead
// of starting etcd and kube-apiserver again (about 6 s, more on a busy
// machine). The shared servers run under a supervisor: the test binary that
// started them, run again detached in a session of its own, with its state
// (admin kubeconfig, address, pids) in the opgen cache (EnvSharedDir
// overrides it). A package joins under a file lock, after checking
// /readyz, and leaves a record of itself in users/ until Stop; the
// supervisor stops the servers and exits once no live process has a record
// for EnvIdle (default DefaultIdle, five minutes), and its servers carry its
// parent-death signal, so nothing outlives it. The shared control plane
// also runs the namespace controller, so namespaces tests delete go away.
//
// Each test gets its own namespaces (Namespace). Cluster-scoped things are
// the exception: a package names what it must not share with another
// package running at the same time in Options.Exclusive (the CRDs of its
// CRDDirs are added; optest adds the operator's CRDs and name), and gets a
// private control plane when a live package holds one of them. It also gets
// one, as from Start, when
//
//   - Options.Private is set: packages whose tests stop or restart the
//     servers (StopAPIServer, StopEtcd) or inject faults must set it, and
//     those methods panic on the shared control plane;
//   - OPGEN_TESTENV_SHARED=0 (EnvShared) is set, to opt a whole run out;
//   - the options ask for what a shared server cannot give: Dir, fixed
//     ports, APIServerFlags, Audit or a ControllerManager;
//   - the shared one does not answer /readyz within 10 s. A start that
//     falls back says why on Options.Output; with no user left, an
//     unhealthy shared control plane is replaced.
//
// Start always starts a private control plane (opgen dev uses it).
//
// # Guarantees
//
//   - No private server outlives the test binary: each runs in its own
//     process group with a parent-death signal, so a panic, a failed
//     TestMain or a SIGKILL of the test binary takes the servers with it.
//   - Authentication and RBAC are on, as in a real cluster. Config is an
//     admin (system:masters); ServiceAccountConfig and
//     ImpersonateServiceAccount give clients that are authorized exactly by
//     the RBAC rules bound to a service account.
//   - Errors say what to do: a port in use names the option to change, an
//     apiserver that is not ready in time comes with the last 50 lines of its
//     log, missing binaries name the command that builds them.
//
// # Caveats
//
// There is no kubelet and no scheduler: Pods are created but never run.
// etcd runs with --unsafe-no-fsync; the data is thrown away at Stop.
//
// The package is stable: an incompatible change of its API comes with a
// line in CHANGELOG.md that says how to migrate, and, where it can,
// after a release of deprecation.
package testenv
