package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// VisitorSpec defines the desired state of Visitor.
type VisitorSpec struct {
	// guestbook the visitor signs.
	// +required
	Guestbook string `json:"guestbook"`

	// message left in the guestbook.
	// +kubebuilder:validation:XValidation:rule="self.size() <= 280",message="a message fits in 280 characters"
	// +optional
	Message string `json:"message,omitempty"`
}

// VisitorStatus defines the observed state of Visitor.
type VisitorStatus struct {
	// signed is true once the message is in the guestbook.
	// +optional
	Signed bool `json:"signed,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=vis

// Visitor is the Schema for the visitors API
type Visitor struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec defines the desired state of Visitor
	// +required
	Spec VisitorSpec `json:"spec"`

	// status defines the observed state of Visitor
	// +optional
	Status VisitorStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// VisitorList contains a list of Visitor
type VisitorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []Visitor `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &Visitor{}, &VisitorList{})
		return nil
	})
}
