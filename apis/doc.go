// Package apis holds the building blocks that opgen users import into their
// own API types: the Object constraint every typed controller works on,
// a Status to embed (observedGeneration and conditions), and helpers for the
// standard Ready, Reconciling and Degraded conditions that follow the
// Kubernetes API conventions.
//
// +kubebuilder:object:generate=true
package apis

//go:generate go run github.com/opgen-sdk/opgen/cmd/opgen generate .
