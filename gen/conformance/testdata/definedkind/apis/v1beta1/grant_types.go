package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "example.com/conformance/definedkind/apis/v1"
)

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=gr
// +kubebuilder:storageversion

// Grant is v1's Grant, served as v1beta1.
type Grant v1.Grant

// +kubebuilder:object:root=true

// GrantList is a list of Grants.
type GrantList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Grant `json:"items"`
}

// GrantSpec is v1's.
type GrantSpec = v1.GrantSpec
