package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "github.com/opgen-sdk/opgen/gen/conversion/testdata/twogroups/apis/common/v1"
)

// WidgetSpec is the desired state.
type WidgetSpec struct {
	Note common.Note `json:"note"`
}

// Widget is a kind.
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
