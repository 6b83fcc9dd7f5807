package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Gadget is served in v1alpha1, deprecated, and v1, the storage version.
//
// +kubebuilder:object:root=true
// +kubebuilder:deprecatedversion:warning="deprecation.opgen.dev/v1alpha1 Gadget is deprecated; use deprecation.opgen.dev/v1"
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GadgetSpec `json:"spec,omitempty"`
}

// GadgetSpec is the desired state.
type GadgetSpec struct {
	// Size is the size.
	// +optional
	Size int32 `json:"size,omitempty"`
}

// GadgetList is a list of Gadget.
//
// +kubebuilder:object:root=true
type GadgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gadget `json:"items"`
}
