package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Kind is the kind of a referent; the package declares it, so the
// registration must not declare a Kind function.
type Kind string

// GrantSpec says which kinds may refer to which.
type GrantSpec struct {
	// From is the kind that may refer.
	// +kubebuilder:validation:MaxLength=63
	From Kind `json:"from"`
	// To is the kind it may refer to.
	To Kind `json:"to"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=gr

// Grant allows references across namespaces. Its markers are in a comment
// group of their own, above its doc comment, as Gateway API writes them.
type Grant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GrantSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// GrantList is a list of Grants.
type GrantList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Grant `json:"items"`
}
