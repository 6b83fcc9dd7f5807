package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Widget is a kind of the fixture.
//
// +kubebuilder:object:root=true
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec `json:"spec"`
}

// WidgetSpec is the desired state.
type WidgetSpec struct {
	// Size is the size.
	// +optional
	Size int32 `json:"size,omitempty"`
	// Ports are the ports.
	// +optional
	Ports []Port `json:"ports,omitempty"`
	// Labels are labels.
	// +optional
	Labels map[string]Label `json:"labels,omitempty"`
}

// Port is a port of the widget.
type Port struct {
	// Number is the port number.
	// +kubebuilder:validation:Minimum=1024
	Number int32 `json:"number"`
}

// Label is a label value.
// +kubebuilder:validation:MaxLength=63
type Label string

// WidgetList is a list of Widget.
//
// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}
