package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Book is a book of the library.
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
type Book struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              BookSpec `json:"spec,omitempty"`
}

// BookSpec is what a book is.
type BookSpec struct {
	// Title is the book's title.
	Title string `json:"title"`
	// Shelves counts the shelves; v1alpha1 called them racks.
	Shelves int32 `json:"shelves,omitempty"`
}

// BookList is a list of Book.
// +kubebuilder:object:root=true
type BookList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Book `json:"items"`
}
