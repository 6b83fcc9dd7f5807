package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Widget has a handler type without its constructor, reads a kind that
// has no reader and watches through a function that does not exist.
//
// +kubebuilder:object:root=true
// +opgen:controller
// +opgen:controller:reads=test.example.com/v1.Gadget
// +opgen:controller:watches=v1.ConfigMap,map=widgetsOfConfigMap
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

// Gadget has a constructor of the wrong shape and a mapping function of
// the wrong shape.
//
// +kubebuilder:object:root=true
// +opgen:controller
// +opgen:controller:watches=v1.ConfigMap,map=gadgetsOfConfigMap
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
