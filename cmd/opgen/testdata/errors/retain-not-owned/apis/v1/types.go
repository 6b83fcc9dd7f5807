package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Widget is a test kind.
//
// +kubebuilder:object:root=true
// +opgen:controller
// +opgen:controller:owns=apps/v1.Deployment
// +opgen:controller:retain=batch/v1.Job
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
