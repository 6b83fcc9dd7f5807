package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WidgetSpec is a widget's spec.
type WidgetSpec struct {
	Name  string `json:"name"`
	Color string `json:"color,omitempty"`
}

// Widget is reconciled, validated and defaulted.
//
// +kubebuilder:object:root=true
// +opgen:controller
// +opgen:webhook:validate
// +opgen:webhook:default
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec WidgetSpec `json:"spec"`
}

// WidgetList is a list of Widgets.
//
// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

// Gadget is cluster-scoped, validated (with no delete check) and
// defaulted: no controller.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +opgen:webhook:validate
// +opgen:webhook:default
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec WidgetSpec `json:"spec"`
}

// GadgetList is a list of Gadgets.
//
// +kubebuilder:object:root=true
type GadgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gadget `json:"items"`
}
