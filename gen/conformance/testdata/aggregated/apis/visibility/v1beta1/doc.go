// Package v1beta1 holds the types of an aggregated API the operator serves
// itself: controller-gen makes no CRD of them.
// +kubebuilder:skip
// +groupName=visibility.example.com
// +k8s:conversion-gen=example.com/conformance/aggregated/apis/visibility/v1beta2
package v1beta1
