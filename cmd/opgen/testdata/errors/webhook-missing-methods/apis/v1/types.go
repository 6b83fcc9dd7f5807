package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Widget is validated and defaulted, but its webhook type lost methods.
//
// +kubebuilder:object:root=true
// +opgen:controller
// +opgen:webhook:validate
// +opgen:webhook:default
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// WidgetList is a list of Widget.
//
// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

// Gadget is defaulted, but the stub file no longer declares its type.
//
// +kubebuilder:object:root=true
// +opgen:webhook:default
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// GadgetList is a list of Gadget.
//
// +kubebuilder:object:root=true
type GadgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gadget `json:"items"`
}
