package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// WidgetSpec is the desired state of a Widget.
type WidgetSpec struct {
	// Size is how big the widget is.
	Size int32 `json:"size"`
}

// WidgetStatus is what the operator saw.
type WidgetStatus struct {
	// ObservedGeneration is the generation last handled.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions say how the widget is.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Widget is a kind of the operator: it makes a CRD.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WidgetSpec   `json:"spec"`
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetList is a list of Widgets.
// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Widget{}, &WidgetList{})
}
