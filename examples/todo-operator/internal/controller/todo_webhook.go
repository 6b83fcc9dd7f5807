package controller

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/clock"

	todov1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
	todoclient "github.com/opgen-sdk/opgen/examples/todo-operator/pkg/generated/clientset/versioned/typed/todo/v1"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/webhook"
)

// DefaultDueAnnotation on a namespace gives the Todos created there without
// a due date one this long after their creation, as a Go duration (72h).
const DefaultDueAnnotation = "todo.example.com/default-due"

// The defaulting webhook reads the Todo's namespace.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get

// TodoWebhook admits Todos (todo.example.com/v1) with two rules CEL cannot
// express, since they read other objects: a title is unique among the
// Todos of a namespace (validation), and a Todo created without a due date
// gets its namespace's default-due annotation (defaulting). It has no
// ValidateDelete: deletions are not sent to it, so a Todo can be deleted
// while the operator is down (the finalizer keeps it until it is archived).
// The generated Setup registers the one NewTodoWebhook returns.
type TodoWebhook struct {
	// Todos lists the other Todos of a namespace.
	Todos todoclient.TodosGetter
	// Namespaces reads a namespace's annotations.
	Namespaces corev1client.NamespacesGetter
	// Clock tells the time; tests pass a fake one.
	Clock clock.PassiveClock
}

// NewTodoWebhook returns the webhook that reads through the operator's
// clients: a list from the API server, not a cache, so that two Todos
// created one right after the other are both seen.
func NewTodoWebhook(op *runtime.Operator) *TodoWebhook {
	cs, err := newClientset(op)
	if err != nil {
		// The glue made the same clientset already; it cannot fail here.
		panic(fmt.Sprintf("todo webhook: %v", err))
	}
	return &TodoWebhook{Todos: cs.TodoV1(), Namespaces: op.Clientset().CoreV1(), Clock: clock.RealClock{}}
}

// ValidateCreate rejects a Todo whose title another Todo of the namespace
// has.
func (w *TodoWebhook) ValidateCreate(ctx context.Context, obj *todov1.Todo) (webhook.Warnings, error) {
	return nil, w.uniqueTitle(ctx, obj)
}

// ValidateUpdate rejects a new title that another Todo of the namespace
// has.
func (w *TodoWebhook) ValidateUpdate(ctx context.Context, old, obj *todov1.Todo) (webhook.Warnings, error) {
	if old.Spec.Title == obj.Spec.Title {
		return nil, nil
	}
	return nil, w.uniqueTitle(ctx, obj)
}

// uniqueTitle returns a field error when another Todo of obj's namespace
// has its title, which kubectl shows as
// `spec.title: Duplicate value: "..."`.
func (w *TodoWebhook) uniqueTitle(ctx context.Context, obj *todov1.Todo) error {
	list, err := w.Todos.Todos(obj.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list the todos of %s to check the title: %w", obj.Namespace, err)
	}
	for _, other := range list.Items {
		if other.Name != obj.Name && other.Spec.Title == obj.Spec.Title {
			errs := field.ErrorList{field.Duplicate(field.NewPath("spec", "title"), obj.Spec.Title)}
			errs[0].Detail = fmt.Sprintf("todo %s has this title already", other.Name)
			return apierrors.NewInvalid(todov1.Kind("Todo"), obj.Name, errs)
		}
	}
	return nil
}

// Default gives a new Todo without a due date the one its namespace's
// todo.example.com/default-due annotation says. A malformed annotation
// rejects the Todo, naming it, rather than leaving it without the due date
// the namespace asked for.
func (w *TodoWebhook) Default(ctx context.Context, obj *todov1.Todo) error {
	if obj.Spec.DueDate != nil || !obj.CreationTimestamp.IsZero() {
		return nil // given, or not a create
	}
	ns, err := w.Namespaces.Namespaces().Get(ctx, obj.Namespace, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read namespace %s for its default due date: %w", obj.Namespace, err)
	}
	in, ok := ns.Annotations[DefaultDueAnnotation]
	if !ok {
		return nil
	}
	d, err := time.ParseDuration(in)
	if err != nil || d <= 0 {
		return fmt.Errorf("namespace %s: annotation %s=%q is not a positive Go duration such as 72h", obj.Namespace, DefaultDueAnnotation, in)
	}
	due := metav1.NewTime(w.Clock.Now().Add(d).Truncate(time.Second))
	obj.Spec.DueDate = &due
	return nil
}
