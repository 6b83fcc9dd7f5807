package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Book is a book of the library, in a version left out of the CRD.
// +kubebuilder:object:root=true
// +kubebuilder:skipversion
type Book struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              BookSpec `json:"spec,omitempty"`
}

// BookSpec is what a book is.
type BookSpec struct {
	// Title is the book's title.
	Title string `json:"title"`
	// Racks counts the racks.
	Racks int32 `json:"racks,omitempty"`
	// Cases counts the glass cases.
	Cases int32 `json:"cases,omitempty"`
}

// BookList is a list of Book.
// +kubebuilder:object:root=true
type BookList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Book `json:"items"`
}
