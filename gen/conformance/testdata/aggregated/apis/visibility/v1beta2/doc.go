// Package v1beta2 holds the types of an aggregated API the operator serves
// itself: controller-gen makes no CRD of them.
// +kubebuilder:skip
// +groupName=visibility.example.com
// +k8s:conversion-gen=false
package v1beta2
