// Package conformance holds opgen's compatibility suite, in its tests: each
// project under testdata is written the way users of controller-gen and
// code-generator write theirs (kubebuilder's layout with markers other
// tools read, controller-runtime's hub and spoke conversions,
// code-generator's register.go and hand-written Convert_ functions,
// versions that convert nothing). The suite runs opgen generate and the
// reference tools on a copy of each, in process or as the Go modules they
// are, and checks that opgen accepts the project, writes the same CRDs,
// deep copies, clients and conversions, says the same warnings on every
// run, and that the result builds.
//
// Each project is a module of its own (go.mod and go.sum beside its
// packages), so that it can import controller-runtime as kubebuilder
// projects do without the SDK depending on it. A flags file holds the
// opgen generate flags of a project; warnings.txt the warnings opgen must
// print, which go test ./gen/conformance -update rewrites.
package conformance
