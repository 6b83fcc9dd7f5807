package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Widget is a test kind.
//
// +kubebuilder:object:root=true
// +kubebuilder:printcolumn:name=Size,typ=integer,JSONPath=.spec.size
// +kubebuilder:mytool:thing=1 // opgen:ignore-marker
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec `json:"spec"`
}

// WidgetSpec is the desired state.
type WidgetSpec struct {
	// Size is at least one.
	// +kubebuilder:validation:Minimun=1
	Size int32 `json:"size"`
	// Name is short.
	// +kubebuilder:validation:MaxLength=ten
	Name string `json:"name,omitempty"`
}

// WidgetList is a list of Widget.
//
// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}
