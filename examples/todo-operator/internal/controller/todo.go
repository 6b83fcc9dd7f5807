package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/util/retry"
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

// Archived is the condition type a deleted Todo gets, False, when the API
// server refuses its archive entry: it says why the Todo stays.
const Archived = "Archived"

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

	// archiving holds a lock per namespace (*sync.Mutex): this process's
	// workers write each archive one at a time, rather than read the same
	// ConfigMap and lose the write to each other.
	archiving sync.Map
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
// safe. When the namespace itself is being deleted there is nothing to keep
// (the archive goes with it), so the Todo goes unarchived. When the API
// server refuses the archive (an immutable ConfigMap, no permission), the
// Todo says why in its Archived condition while Delete is retried.
func (c *TodoController) Delete(ctx context.Context, a *plug.Action[*todov1.Todo]) error {
	t := a.Object
	evicted, err := c.archive(ctx, t.Namespace, t.Name, newEntry(t, c.Clock.Now()))
	switch {
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		a.Normal("NotArchived", "namespace %s is being deleted, and its archive with it", t.Namespace)
		return nil
	case apierrors.IsInvalid(err), apierrors.IsForbidden(err), apierrors.IsRequestEntityTooLargeError(err):
		apis.SetCondition(&t.Status.Conditions, t.Generation, Archived, metav1.ConditionFalse, "ArchiveRefused",
			fmt.Sprintf("the API server refuses the entry in ConfigMap %s: %v; the Todo stays until it is archived: fix the ConfigMap or the operator's RBAC, or remove the operator's finalizer to delete the Todo unarchived", ArchiveName, err))
		return fmt.Errorf("archive %s/%s in ConfigMap %s: %w", t.Namespace, t.Name, ArchiveName, err)
	case err != nil:
		return fmt.Errorf("archive %s/%s in ConfigMap %s: %w", t.Namespace, t.Name, ArchiveName, err)
	}
	a.Normal("Archived", "%q archived in ConfigMap %s", t.Spec.Title, ArchiveName)
	if len(evicted) > 0 {
		a.Normal("ArchiveFull", "%d oldest entries left ConfigMap %s to keep it under %d bytes", len(evicted), ArchiveName, ArchiveBudget)
	}
	return nil
}

// archive adds e under key to the archive ConfigMap, creating it when
// missing, and returns the keys of the oldest entries it removed to stay
// under ArchiveBudget. A conflict (another writer was first: another
// replica, or a person) reads again.
func (c *TodoController) archive(ctx context.Context, namespace, key string, e Entry) (evicted []string, err error) {
	value, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	mu, _ := c.archiving.LoadOrStore(namespace, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	api := c.ConfigMaps.ConfigMaps(namespace)
	again := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }
	err = retry.OnError(retry.DefaultRetry, again, func() error {
		cm, err := api.Get(ctx, ArchiveName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = api.Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: ArchiveName, Namespace: namespace},
				Data:       map[string]string{key: string(value)},
			}, metav1.CreateOptions{FieldManager: "todo-operator"})
			return err
		}
		if err != nil {
			return err
		}
		patch, out, err := archivePatch(cm, key, string(value))
		if err != nil {
			return err
		}
		_, err = api.Patch(ctx, ArchiveName, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "todo-operator"})
		evicted = out
		return err
	})
	return evicted, err
}
