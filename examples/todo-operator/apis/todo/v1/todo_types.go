package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/apis"
)

// Todo is a task with a state and an optional due date. The operator marks
// overdue todos in their status and, when a todo is deleted, archives it in
// the ConfigMap todo-archive of its namespace. Its admission webhooks keep
// titles unique in a namespace and give a todo without a due date the
// namespace's default (internal/controller/todo_webhook.go).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=todos,shortName=td,categories=todo
// +kubebuilder:printcolumn:name=Title,type=string,JSONPath=.spec.title
// +kubebuilder:printcolumn:name=State,type=string,JSONPath=.spec.state
// +kubebuilder:printcolumn:name=Due,type=string,JSONPath=.spec.dueDate
// +kubebuilder:printcolumn:name=Overdue,type=boolean,JSONPath=.status.overdue
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=.metadata.creationTimestamp
// +opgen:controller
// +opgen:controller:reconcileEvery=1m
// +opgen:webhook:validate
// +opgen:webhook:default
type Todo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TodoSpec   `json:"spec"`
	Status TodoStatus `json:"status,omitempty"`
}

// State is where a todo stands.
// +kubebuilder:validation:Enum=Pending;InProgress;Done
type State string

// The states of a todo.
const (
	Pending    State = "Pending"
	InProgress State = "InProgress"
	Done       State = "Done"
)

// TodoSpec is the todo itself.
//
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.state) || oldSelf.state != 'Done' || self.state != 'Pending'",message="a Done todo cannot go back to Pending"
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

	// State is Pending, InProgress or Done.
	// +kubebuilder:default=Pending
	// +optional
	State State `json:"state,omitempty"`

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
