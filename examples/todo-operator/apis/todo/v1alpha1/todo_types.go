package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/apis"
)

// Todo is a task, done or not, with an optional due date. v1alpha1 says
// whether a todo is done; v1 replaced the boolean with the state enum
// (Pending, InProgress, Done), and the operator converts between the two
// (conversion.go).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=todos,shortName=td,categories=todo
// +kubebuilder:printcolumn:name=Title,type=string,JSONPath=.spec.title
// +kubebuilder:printcolumn:name=Done,type=boolean,JSONPath=.spec.done
// +kubebuilder:printcolumn:name=Due,type=string,JSONPath=.spec.dueDate
// +kubebuilder:printcolumn:name=Overdue,type=boolean,JSONPath=.status.overdue
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=.metadata.creationTimestamp
type Todo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TodoSpec   `json:"spec"`
	Status TodoStatus `json:"status,omitempty"`
}

// TodoSpec is the todo itself.
type TodoSpec struct {
	// Title says what to do.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	Title string `json:"title"`

	// Description gives the details, in at most 4096 characters: the
	// archive keeps deleted Todos in one ConfigMap.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Description string `json:"description,omitempty"`

	// Done says whether the todo is done.
	// +optional
	Done bool `json:"done,omitempty"`

	// DueDate is when the todo should be done.
	// +optional
	DueDate *metav1.Time `json:"dueDate,omitempty"`
}

// TodoStatus is what the operator observed.
type TodoStatus struct {
	apis.Status `json:",inline"`

	// Overdue is true when the due date has passed and the todo is not Done.
	// +optional
	Overdue bool `json:"overdue,omitempty"`
}

// TodoList is a list of Todos.
//
// +kubebuilder:object:root=true
type TodoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Todo `json:"items"`
}
