package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "github.com/opgen-sdk/opgen/gen/conversion/testdata/twogroups/apis/common/v1"
)

// GadgetSpec is the desired state.
type GadgetSpec struct {
	Note common.Note `json:"note"`
}

// Gadget is a kind.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GadgetSpec `json:"spec"`
}

// GadgetList is a list of Gadget.
//
// +kubebuilder:object:root=true
type GadgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gadget `json:"items"`
}
