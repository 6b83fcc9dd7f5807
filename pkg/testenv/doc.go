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
// # Guarantees
//
//   - No process outlives the test binary: each server runs in its own
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
package testenv
