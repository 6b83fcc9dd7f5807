package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	todov1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
	"github.com/opgen-sdk/opgen/examples/todo-operator/internal/controller"
	"github.com/opgen-sdk/opgen/pkg/optest"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/webhook"
)

var webhooksReady sync.Once

// waitForWebhooks waits until the API server calls both webhooks of the
// package's operator, which registers them once it serves them: a probe
// Todo without a due date in a namespace with a default gets one, and a
// second with its title is refused.
func waitForWebhooks(t *testing.T) {
	t.Helper()
	webhooksReady.Do(func() {
		ns := kit.Namespace(t)
		annotateDefaultDue(t, ns, "1h")
		optest.Eventually(t, "the API server to call the operator's webhooks", func(ctx context.Context) (bool, error) {
			defer func() {
				_ = todos.TodoV1().Todos(ns).Delete(ctx, "probe", metav1.DeleteOptions{})
			}()
			td, err := todos.TodoV1().Todos(ns).Create(ctx, &todov1.Todo{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: todov1.TodoSpec{Title: "Probe"}}, metav1.CreateOptions{})
			if err != nil || td.Spec.DueDate == nil {
				return false, err
			}
			_, err = todos.TodoV1().Todos(ns).Create(ctx, &todov1.Todo{ObjectMeta: metav1.ObjectMeta{Name: "probe-again"}, Spec: todov1.TodoSpec{Title: "Probe"}}, metav1.CreateOptions{})
			if err == nil {
				return false, todos.TodoV1().Todos(ns).Delete(ctx, "probe-again", metav1.DeleteOptions{})
			}
			return apierrors.IsInvalid(err), nil
		})
	})
}

func annotateDefaultDue(t *testing.T, ns, due string) {
	t.Helper()
	ctx := context.Background()
	nsObj, err := kit.Clientset.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	require.NoError(t, err)
	if nsObj.Annotations == nil {
		nsObj.Annotations = map[string]string{}
	}
	nsObj.Annotations[controller.DefaultDueAnnotation] = due
	_, err = kit.Clientset.CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// TestTitlesAreUnique: the validating webhook, which the operator
// registered itself in local mode, rejects a second Todo with a title the
// namespace has, with the field error kubectl shows; another namespace may
// have the title, and a rename to a free title passes.
func TestTitlesAreUnique(t *testing.T) {
	t.Parallel()
	waitForWebhooks(t)
	ctx := context.Background()
	ns, other := kit.Namespace(t), kit.Namespace(t)
	createTodo(t, ns, "first", todov1.TodoSpec{Title: "Water the plants"})
	_, err := todos.TodoV1().Todos(ns).Create(ctx, &todov1.Todo{
		ObjectMeta: metav1.ObjectMeta{Name: "second"},
		Spec:       todov1.TodoSpec{Title: "Water the plants"},
	}, metav1.CreateOptions{})
	require.Error(t, err)
	assert.True(t, apierrors.IsInvalid(err), "a field error, not a webhook failure: %v", err)
	assert.Contains(t, err.Error(), `admission webhook "vtodo.todo.example.com" denied the request: Todo.todo.example.com "second" is invalid: spec.title: Duplicate value: "Water the plants": todo first has this title already`)

	createTodo(t, other, "second", todov1.TodoSpec{Title: "Water the plants"})
	createTodo(t, ns, "second", todov1.TodoSpec{Title: "Water the garden"})
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		td := getTodo(t, ns, "second")
		td.Spec.Title = "Water the plants"
		_, err := todos.TodoV1().Todos(ns).Update(ctx, td, metav1.UpdateOptions{})
		return err
	})
	assert.ErrorContains(t, err, "spec.title: Duplicate value", "a rename to a taken title is refused too")
}

// TestDueDateIsDefaulted: the defaulting webhook gives a Todo created
// without a due date its namespace's default-due, and leaves a given one.
func TestDueDateIsDefaulted(t *testing.T) {
	t.Parallel()
	waitForWebhooks(t)
	ns := kit.Namespace(t)
	annotateDefaultDue(t, ns, "72h")

	before := time.Now()
	createTodo(t, ns, "defaulted", todov1.TodoSpec{Title: "Renew the passport"})
	td := getTodo(t, ns, "defaulted")
	require.NotNil(t, td.Spec.DueDate, "the webhook set the due date")
	assert.WithinRange(t, td.Spec.DueDate.Time, before.Add(72*time.Hour).Add(-time.Second), time.Now().Add(72*time.Hour))

	given := metav1.NewTime(time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC))
	createTodo(t, ns, "given", todov1.TodoSpec{Title: "Vote", DueDate: &given})
	assert.True(t, getTodo(t, ns, "given").Spec.DueDate.Equal(&given), "a due date given is kept")
}

// TestFinalizerFromCreation: the defaulting webhook adds the controller's
// finalizer on create (its handler has Delete), so a Todo deleted at once,
// before the operator's first action, still waits for its Delete and is
// archived. A paused Todo gets none.
func TestFinalizerFromCreation(t *testing.T) {
	t.Parallel()
	waitForWebhooks(t)
	ctx := context.Background()
	ns := kit.Namespace(t)

	td, err := todos.TodoV1().Todos(ns).Create(ctx, &todov1.Todo{
		ObjectMeta: metav1.ObjectMeta{Name: "at-once"},
		Spec:       todov1.TodoSpec{Title: "Deleted at once"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"todo.example.com/finalizer"}, td.Finalizers, "the create's own answer carries the finalizer")
	require.NoError(t, todos.TodoV1().Todos(ns).Delete(ctx, "at-once", metav1.DeleteOptions{}))
	optest.WaitForDeletion(t, "the Todo deleted at once", todoGetter(ns, "at-once"))
	_, ok := archived(t, ns, "at-once")
	assert.True(t, ok, "Delete ran before the finalizer went")

	paused, err := todos.TodoV1().Todos(ns).Create(ctx, &todov1.Todo{
		ObjectMeta: metav1.ObjectMeta{Name: "paused", Annotations: map[string]string{runtime.PauseAnnotation: "true"}},
		Spec:       todov1.TodoSpec{Title: "Paused from the start"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Empty(t, paused.Finalizers, "a paused object gets no finalizer")
}

// TestStartedWithoutWebhooks is not parallel: it stops the package's
// operator, whose configurations stay registered, and starts it with
// --webhook-bind-address=0, as its generated ServiceAccount. Before it is
// ready it has deleted them, since nothing serves their webhooks any more:
// a Todo is created without them. The operator with its webhooks then
// registers them again.
func TestStartedWithoutWebhooks(t *testing.T) {
	waitForWebhooks(t)
	ctx := context.Background()
	admission := kit.Clientset.AdmissionregistrationV1()
	_, err := admission.ValidatingWebhookConfigurations().Get(ctx, webhook.ValidatingConfigurationName("todo-operator"), metav1.GetOptions{})
	require.NoError(t, err, "registered by the running operator")

	require.NoError(t, kit.StopOperator())
	t.Cleanup(func() { require.NoError(t, kit.StartOperator(ctx)) })
	opts := kit.Operator.Options(logr.Discard())
	opts.Webhook.Addr = "0"
	start := time.Now()
	stop, err := kit.Operator.Start(ctx, opts, controller.Setup)
	require.NoError(t, err, "ready once the stale configurations are gone")
	t.Logf("started without webhooks: ready, the stale configurations removed, %v after the start", time.Since(start).Round(time.Millisecond))
	_, err = admission.ValidatingWebhookConfigurations().Get(ctx, webhook.ValidatingConfigurationName("todo-operator"), metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the validating configuration is removed: %v", err)
	_, err = admission.MutatingWebhookConfigurations().Get(ctx, webhook.MutatingConfigurationName("todo-operator"), metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the mutating configuration is removed: %v", err)
	ns := kit.Namespace(t)
	createTodo(t, ns, "unguarded", todov1.TodoSpec{Title: "Created with no webhook registered"})
	require.NoError(t, stop())
}
