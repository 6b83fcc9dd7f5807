package v2

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// WidgetSpec is the desired state of a Widget.
type WidgetSpec struct {
	// The embedded struct has another name in the other version.
	Common `json:",inline"`
}

// Common holds what every spec has.
type Common struct {
	Owner string `json:"owner,omitempty"`
	// Team is new in v2.
	Team string `json:"team,omitempty"`
}

// Widget is a test kind.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec WidgetSpec `json:"spec"`
}

// WidgetList is a list of Widget.
//
// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}
