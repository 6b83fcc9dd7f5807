// Package v1beta1 is the older version of the boards API; conversion-gen
// writes its conversions to and from v1.
// +kubebuilder:object:generate=true
// +groupName=boards.example.com
// +k8s:conversion-gen=example.com/conformance/stalespoke/api/v1
package v1beta1
