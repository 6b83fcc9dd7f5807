package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/clock"

	"github.com/opgen-sdk/opgen/apis"
	todov1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// ArchiveName is the ConfigMap, one per namespace, that keeps deleted Todos.
const ArchiveName = "todo-archive"

// Overdue is the condition type that says a Todo missed its due date.
const Overdue = "Overdue"

// The archive is written with get, create and patch on ConfigMaps, which
// opgen cannot derive from the Todo's markers; this marker adds them to the
// generated ClusterRole.
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;create;patch

// TodoController tracks Todos: it marks the overdue ones in status and
// archives deleted ones.
type TodoController struct {
	// ConfigMaps writes the archive.
	ConfigMaps corev1client.ConfigMapsGetter
	// Clock tells the time; tests pass a fake one.
	Clock clock.PassiveClock
}

// NewTodoController returns a controller that writes through the operator's
// clientset and reads the real clock.
func NewTodoController(op *runtime.Operator) *TodoController {
	return &TodoController{ConfigMaps: op.Clientset().CoreV1(), Clock: clock.RealClock{}}
}

// Reconcile runs for every verb but Delete: the first time the controller
// sees a Todo (plug.Add), when its spec changed (plug.Modify: a new state or
// due date), every minute (+opgen:controller:reconcileEvery=1m) and after
// every other change. It sets status.overdue and the Overdue condition, and
// asks to run again right at the due date so the flag is not up to a minute
// late.
func (c *TodoController) Reconcile(ctx context.Context, a *plug.Action[*todov1.Todo]) error {
	switch a.Verb {
	case plug.Add:
		a.Normal("Tracked", "tracking %q (%s)", a.Object.Spec.Title, a.Object.Spec.State)
	case plug.Modify:
		a.Normal("Updated", "%q is %s", a.Object.Spec.Title, a.Object.Spec.State)
	}
	t := a.Object
	now := c.Clock.Now()
	overdue := t.Spec.DueDate != nil && t.Spec.State != todov1.Done && !now.Before(t.Spec.DueDate.Time)
	if overdue && !a.Observed().Status.Overdue {
		a.Warning("Overdue", "%q was due %s", t.Spec.Title, t.Spec.DueDate.UTC().Format(time.RFC3339))
	}
	t.Status.Overdue = overdue
	switch {
	case overdue:
		apis.SetCondition(&t.Status.Conditions, t.Generation, Overdue, metav1.ConditionTrue, "PastDueDate",
			"due "+t.Spec.DueDate.UTC().Format(time.RFC3339))
	case t.Spec.State == todov1.Done:
		apis.SetCondition(&t.Status.Conditions, t.Generation, Overdue, metav1.ConditionFalse, "Done", "")
	case t.Spec.DueDate != nil:
		apis.SetCondition(&t.Status.Conditions, t.Generation, Overdue, metav1.ConditionFalse, "BeforeDueDate", "")
		a.RequeueAfter(t.Spec.DueDate.Sub(now))
	default:
		apis.SetCondition(&t.Status.Conditions, t.Generation, Overdue, metav1.ConditionFalse, "NoDueDate", "")
	}
	return nil
}

// Delete archives the Todo in the ConfigMap todo-archive of its namespace,
// under the Todo's name. The runtime keeps a finalizer on every Todo because
// this method exists, so the archive is written even when the Todo was
// deleted while the operator was down, and the Todo goes away only after it.
// Writing the same entry twice is harmless, so a retry after a failure is
// safe.
func (c *TodoController) Delete(ctx context.Context, a *plug.Action[*todov1.Todo]) error {
	t := a.Object
	entry, err := json.Marshal(struct {
		Title       string       `json:"title"`
		Description string       `json:"description,omitempty"`
		State       todov1.State `json:"state"`
		DueDate     *metav1.Time `json:"dueDate,omitempty"`
		Overdue     bool         `json:"overdue,omitempty"`
	}{t.Spec.Title, t.Spec.Description, t.Spec.State, t.Spec.DueDate, t.Status.Overdue})
	if err != nil {
		return plug.Terminal(err)
	}
	if err := c.archive(ctx, t.Namespace, t.Name, string(entry)); err != nil {
		return fmt.Errorf("archive %s/%s in ConfigMap %s: %w", t.Namespace, t.Name, ArchiveName, err)
	}
	a.Normal("Archived", "%q archived in ConfigMap %s", t.Spec.Title, ArchiveName)
	return nil
}

// archive adds key=value to the archive ConfigMap, creating it when missing.
// A merge patch touches only that key, so entries of other Todos stay.
func (c *TodoController) archive(ctx context.Context, namespace, key, value string) error {
	api := c.ConfigMaps.ConfigMaps(namespace)
	patch, err := json.Marshal(map[string]any{"data": map[string]string{key: value}})
	if err != nil {
		return err
	}
	_, err = api.Patch(ctx, ArchiveName, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "todo-operator"})
	if !apierrors.IsNotFound(err) {
		return err
	}
	_, err = api.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ArchiveName, Namespace: namespace},
		Data:       map[string]string{key: value},
	}, metav1.CreateOptions{FieldManager: "todo-operator"})
	if apierrors.IsAlreadyExists(err) {
		return c.archive(ctx, namespace, key, value) // created meanwhile: patch it
	}
	return err
}
