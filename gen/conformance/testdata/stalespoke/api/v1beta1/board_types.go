package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// BoardSpec is the desired state of a Board.
type BoardSpec struct {
	// Title names the board.
	Title string `json:"title"`
}

// Board is a board, as v1beta1 served it.
// +kubebuilder:object:root=true
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
