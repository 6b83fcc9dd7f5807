// Package v1 is the benchmark API: one kind, Load, that both frameworks
// under test reconcile. opgen serves it under the group below; the
// controller-runtime operator registers the same Go types under
// crload.bench.opgen.dev (see bench/operator/cr), from a copy of the CRD with the
// group renamed.
//
// +groupName=load.bench.opgen.dev
package v1
