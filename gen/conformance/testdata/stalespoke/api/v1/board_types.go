package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// BoardSpec is the desired state of a Board.
type BoardSpec struct {
	// Title names the board. controller-gen ignores the +k8s: tag, and so
	// does opgen with --layout kubebuilder: the CRD stays controller-gen's.
	// +k8s:maxLength=63
	Title string `json:"title"`
	// Color is new in v1: v1beta1 objects have none, and converting to
	// v1beta1 drops it, on purpose.
	Color string `json:"color,omitempty"`
}

// Board is a board, stored as v1.
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
type Board struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec BoardSpec `json:"spec"`
}

// BoardList is a list of Boards.
// +kubebuilder:object:root=true
type BoardList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Board `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Board{}, &BoardList{})
}
