package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/apis"
)

// ShapeSpec is the desired state of a Shape.
type ShapeSpec struct {
	// Size is how big the shape is.
	// +optional
	Size int32 `json:"size,omitempty"`
}

// ShapeStatus is the observed state of a Shape.
type ShapeStatus struct {
	// Status records the observed generation and the conditions.
	apis.Status `json:",inline"`
}

// Shape is served in v1 and v2 with the same schema; each version has a
// controller, and each object goes to the one of the version it was last
// written in.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +opgen:controller
// +opgen:controller:dispatch=written
type Shape struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ShapeSpec   `json:"spec,omitempty"`
	Status ShapeStatus `json:"status,omitempty"`
}

// ShapeList is a list of Shape objects.
//
// +kubebuilder:object:root=true
type ShapeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Shape `json:"items"`
}
