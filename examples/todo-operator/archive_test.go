package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	todov1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
	todov1alpha1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1alpha1"
	"github.com/opgen-sdk/opgen/examples/todo-operator/internal/controller"
	"github.com/opgen-sdk/opgen/pkg/optest"
)

// TestHugeDescriptionIsRefused: a description of 1 MiB once made a Todo
// that could never be deleted (its archive entry could not be written);
// the CRD now refuses one over 4096 characters, in either version. At the
// limit, in 4-byte characters, the Todo is archived, its entry cut to
// MaxArchivedDescription bytes, and deleted.
func TestHugeDescriptionIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := kit.Namespace(t)
	huge := strings.Repeat("x", 1<<20)
	_, err := todos.TodoV1().Todos(ns).Create(ctx, &todov1.Todo{ObjectMeta: metav1.ObjectMeta{Name: "huge"},
		Spec: todov1.TodoSpec{Title: "Huge", Description: huge}}, metav1.CreateOptions{})
	require.Error(t, err)
	assert.True(t, apierrors.IsInvalid(err), "%v", err)
	assert.Contains(t, err.Error(), "spec.description: Too long: may not be more than 4096")
	_, err = todos.TodoV1alpha1().Todos(ns).Create(ctx, &todov1alpha1.Todo{ObjectMeta: metav1.ObjectMeta{Name: "huge-alpha"},
		Spec: todov1alpha1.TodoSpec{Title: "Huge", Description: huge}}, metav1.CreateOptions{})
	require.Error(t, err, "v1alpha1 is no way around it")
	assert.True(t, apierrors.IsInvalid(err), "%v", err)

	createTodo(t, ns, "longest", todov1.TodoSpec{Title: "Longest", Description: strings.Repeat("😀", 4096)})
	waitTodo(t, ns, "longest", "the finalizer", func(td *todov1.Todo) bool { return len(td.Finalizers) == 1 })
	require.NoError(t, todos.TodoV1().Todos(ns).Delete(ctx, "longest", metav1.DeleteOptions{}))
	optest.WaitForDeletion(t, "the Todo at the limit", todoGetter(ns, "longest"))
	entry, ok := archived(t, ns, "longest")
	require.True(t, ok)
	assert.Equal(t, true, entry["truncated"])
	assert.LessOrEqual(t, len(entry["description"].(string)), controller.MaxArchivedDescription)
}

// TestArchiveStaysUnderBudget: an archive already near its budget keeps
// taking deleted Todos: the oldest entries leave, the new one is there,
// and the ConfigMap stays under ArchiveBudget.
func TestArchiveStaysUnderBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := kit.Namespace(t)
	data := map[string]string{}
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 70 { // 70 entries of 4 KiB: over the 256 KiB budget already
		v, err := json.Marshal(controller.Entry{Title: "old", Description: strings.Repeat("o", 4000), ArchivedAt: metav1.NewTime(old.Add(time.Duration(i) * time.Hour))})
		require.NoError(t, err)
		data[fmt.Sprintf("old-%02d", i)] = string(v)
	}
	_, err := kit.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: controller.ArchiveName}, Data: data}, metav1.CreateOptions{})
	require.NoError(t, err)

	createTodo(t, ns, "fresh", todov1.TodoSpec{Title: "Fresh", Description: strings.Repeat("f", 4000)})
	waitTodo(t, ns, "fresh", "the finalizer", func(td *todov1.Todo) bool { return len(td.Finalizers) == 1 })
	require.NoError(t, todos.TodoV1().Todos(ns).Delete(ctx, "fresh", metav1.DeleteOptions{}))
	optest.WaitForDeletion(t, "the Todo", todoGetter(ns, "fresh"))
	cm, err := kit.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, controller.ArchiveName, metav1.GetOptions{})
	require.NoError(t, err)
	size := 0
	for k, v := range cm.Data {
		size += len(k) + len(v)
	}
	assert.LessOrEqual(t, size, controller.ArchiveBudget)
	assert.Contains(t, cm.Data, "fresh")
	assert.NotContains(t, cm.Data, "old-00", "the oldest left")
	assert.Contains(t, cm.Data, "old-69", "the newest stayed")
	assertEvent(t, ns, corev1.EventTypeNormal, "ArchiveFull", "oldest entries left")
}

// TestRefusedArchiveIsACondition: an archive the API server refuses to
// change (an immutable ConfigMap) keeps the deleted Todo, which says why
// in its Archived condition; once the ConfigMap is gone, the retried
// Delete archives it and it goes.
func TestRefusedArchiveIsACondition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := kit.Namespace(t)
	_, err := kit.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: controller.ArchiveName}, Data: map[string]string{"x": "{}"}, Immutable: ptr.To(true),
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	createTodo(t, ns, "stuck", todov1.TodoSpec{Title: "Stuck"})
	waitTodo(t, ns, "stuck", "the finalizer", func(td *todov1.Todo) bool { return len(td.Finalizers) == 1 })
	require.NoError(t, todos.TodoV1().Todos(ns).Delete(ctx, "stuck", metav1.DeleteOptions{}))

	td := optest.WaitFor(t, "the Archived condition", todoGetter(ns, "stuck"), func(td *todov1.Todo) bool {
		return apimeta.FindStatusCondition(td.Status.Conditions, controller.Archived) != nil
	})
	c := apimeta.FindStatusCondition(td.Status.Conditions, controller.Archived)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, "ArchiveRefused", c.Reason)
	assert.Contains(t, c.Message, "field is immutable")
	assert.Contains(t, c.Message, "remove the operator's finalizer")

	require.NoError(t, kit.Clientset.CoreV1().ConfigMaps(ns).Delete(ctx, controller.ArchiveName, metav1.DeleteOptions{}))
	optest.WaitForDeletion(t, "the Todo, archived once the ConfigMap could be written", todoGetter(ns, "stuck"))
	_, ok := archived(t, ns, "stuck")
	assert.True(t, ok)
}

// TestNamespaceBeingDeleted: in a namespace being deleted no archive can
// be created, and none is needed (it would go with the namespace): the
// Todo goes unarchived instead of holding the namespace for ever.
func TestNamespaceBeingDeleted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := kit.Namespace(t)
	createTodo(t, ns, "last", todov1.TodoSpec{Title: "Last"})
	waitTodo(t, ns, "last", "the finalizer", func(td *todov1.Todo) bool { return len(td.Finalizers) == 1 })
	// No namespace controller runs here: the namespace stays Terminating,
	// its objects in place, as while a real one works through them.
	require.NoError(t, kit.Clientset.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}))
	optest.WaitFor(t, "the namespace terminating", func(ctx context.Context) (*corev1.Namespace, error) {
		return kit.Clientset.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	}, func(n *corev1.Namespace) bool { return n.Status.Phase == corev1.NamespaceTerminating })
	require.NoError(t, todos.TodoV1().Todos(ns).Delete(ctx, "last", metav1.DeleteOptions{}))
	optest.WaitForDeletion(t, "the Todo of a namespace being deleted", todoGetter(ns, "last"))
	_, ok := archived(t, ns, "last")
	assert.False(t, ok)
}
