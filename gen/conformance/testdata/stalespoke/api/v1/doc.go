// Package v1 is the storage version of the boards API. Its tag asks
// conversion-gen for conversions to v1beta1 that need a hand-written
// function in this package, which nobody wrote: the project's scripts
// give conversion-gen the v1beta1 package only, as cluster-api providers'
// Makefiles do.
// +kubebuilder:object:generate=true
// +groupName=boards.example.com
// +k8s:conversion-gen=example.com/conformance/stalespoke/api/v1beta1
package v1
