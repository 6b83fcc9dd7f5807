package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Widget has a webhook, and the project no controller package.
//
// +kubebuilder:object:root=true
// +opgen:webhook:validate
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
