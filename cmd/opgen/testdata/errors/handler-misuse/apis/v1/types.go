package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Widget is a test kind; its controller watches every Widget.
//
// +kubebuilder:object:root=true
// +opgen:controller
// +opgen:controller:labelSelector=app=web
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

// Gadget is a kind of this project, not a built-in one.
//
// +kubebuilder:object:root=true
// +opgen:controller:for=v1.Pod
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

// PodHelper is a handler outside the controller package.
//
// +opgen:controller:for=v1.Pod
type PodHelper struct{}
