package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/opgen-sdk/opgen/apis"
	todov1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
	todov1alpha1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1alpha1"
	"github.com/opgen-sdk/opgen/examples/todo-operator/internal/controller"
	"github.com/opgen-sdk/opgen/examples/todo-operator/pkg/generated/clientset/versioned"
	"github.com/opgen-sdk/opgen/pkg/optest"
)

// The operator runs once for the package, in-process but as its own
// ServiceAccount with exactly the generated RBAC.
var (
	kit   = optest.New(optest.Options{Name: "todo-operator", Setup: controller.Setup})
	todos versioned.Interface
)

func TestMain(m *testing.M) {
	kit.OnStart(func() { todos = versioned.NewForConfigOrDie(kit.Config) })
	kit.Main(m)
}

func createTodo(t *testing.T, ns, name string, spec todov1.TodoSpec) {
	t.Helper()
	_, err := todos.TodoV1().Todos(ns).Create(context.Background(), &todov1.Todo{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       spec,
	}, metav1.CreateOptions{})
	require.NoError(t, err)
}

func getTodo(t *testing.T, ns, name string) *todov1.Todo {
	t.Helper()
	todo, err := todos.TodoV1().Todos(ns).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	return todo
}

func waitTodo(t *testing.T, ns, name, what string, cond func(*todov1.Todo) bool) {
	t.Helper()
	optest.WaitFor(t, what, todoGetter(ns, name), cond)
}

func todoGetter(ns, name string) optest.Getter[*todov1.Todo] {
	return func(ctx context.Context) (*todov1.Todo, error) {
		return todos.TodoV1().Todos(ns).Get(ctx, name, metav1.GetOptions{})
	}
}

func archived(t *testing.T, ns, name string) (map[string]any, bool) {
	t.Helper()
	cm, err := kit.Clientset.CoreV1().ConfigMaps(ns).Get(context.Background(), controller.ArchiveName, metav1.GetOptions{})
	if err != nil || cm.Data[name] == "" {
		return nil, false
	}
	var entry map[string]any
	require.NoError(t, json.Unmarshal([]byte(cm.Data[name]), &entry))
	return entry, true
}

func TestTodoLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := kit.Namespace(t)
	past := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	createTodo(t, ns, "taxes", todov1.TodoSpec{Title: "File taxes", Description: "before the deadline", DueDate: &past})

	waitTodo(t, ns, "taxes", "overdue and handled", func(td *todov1.Todo) bool {
		return td.Status.Overdue && td.Status.ObservedGeneration == 1
	})
	td := getTodo(t, ns, "taxes")
	assert.Equal(t, todov1.Pending, td.Spec.State, "the CRD defaults the state")
	assert.True(t, meta(td, controller.Overdue), "the Overdue condition")
	assert.Len(t, td.Finalizers, 1, "Delete exists, so the runtime holds a finalizer")
	assertEvent(t, ns, corev1.EventTypeWarning, "Overdue", "File taxes")

	// Done: no longer overdue.
	td.Spec.State = todov1.Done
	_, err := todos.TodoV1().Todos(ns).Update(ctx, td, metav1.UpdateOptions{})
	require.NoError(t, err)
	waitTodo(t, ns, "taxes", "done and no longer overdue", func(td *todov1.Todo) bool {
		return !td.Status.Overdue && td.Status.ObservedGeneration == 2
	})

	// The CEL rule: a Done todo cannot go back to Pending.
	td = getTodo(t, ns, "taxes")
	td.Spec.State = todov1.Pending
	_, err = todos.TodoV1().Todos(ns).Update(ctx, td, metav1.UpdateOptions{})
	require.Error(t, err)
	assert.True(t, apierrors.IsInvalid(err))
	assert.Contains(t, err.Error(), "a Done todo cannot go back to Pending")

	// Delete archives it, then the Todo is gone.
	require.NoError(t, todos.TodoV1().Todos(ns).Delete(ctx, "taxes", metav1.DeleteOptions{}))
	optest.WaitForDeletion(t, "the Todo", todoGetter(ns, "taxes"))
	entry, ok := archived(t, ns, "taxes")
	require.True(t, ok, "no archive entry")
	assert.Equal(t, "File taxes", entry["title"])
	assert.Equal(t, "Done", entry["state"])
	assertEvent(t, ns, corev1.EventTypeNormal, "Archived", "File taxes")
}

// TestDueDateArrives: a Todo due in a few seconds turns overdue right then,
// through the RequeueAfter its Reconcile asks for, not a minute later.
func TestDueDateArrives(t *testing.T) {
	t.Parallel()
	ns := kit.Namespace(t)
	due := metav1.NewTime(time.Now().Add(3 * time.Second))
	createTodo(t, ns, "soon", todov1.TodoSpec{Title: "Soon", DueDate: &due})
	waitTodo(t, ns, "soon", "handled, not overdue yet", func(td *todov1.Todo) bool {
		return td.Status.ObservedGeneration == 1
	})
	if time.Now().Before(due.Time) {
		assert.False(t, getTodo(t, ns, "soon").Status.Overdue, "overdue before its due date")
	}
	waitTodo(t, ns, "soon", "overdue after the due date", func(td *todov1.Todo) bool { return td.Status.Overdue })
}

// TestOlderVersionIsServed: v1alpha1 is served and converted to and from
// the storage version v1 by the operator's conversion webhook: done in
// v1alpha1 is the state Done in v1, and InProgress, which v1alpha1 cannot
// say, survives a read and write through v1alpha1.
func TestOlderVersionIsServed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := kit.Namespace(t)
	_, err := todos.TodoV1alpha1().Todos(ns).Create(ctx, &todov1alpha1.Todo{
		ObjectMeta: metav1.ObjectMeta{Name: "old"},
		Spec:       todov1alpha1.TodoSpec{Title: "Written as v1alpha1", Done: true},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	waitTodo(t, ns, "old", "handled through v1", func(td *todov1.Todo) bool {
		return td.Spec.Title == "Written as v1alpha1" && td.Spec.State == todov1.Done && td.Status.ObservedGeneration == 1
	})

	createTodo(t, ns, "started", todov1.TodoSpec{Title: "Started", State: todov1.InProgress})
	// The operator writes the status meanwhile: read and write again on a
	// conflict, as any client of a controlled object does.
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		old, err := todos.TodoV1alpha1().Todos(ns).Get(ctx, "started", metav1.GetOptions{})
		if err != nil {
			return err
		}
		assert.False(t, old.Spec.Done, "an InProgress todo is not done in v1alpha1")
		old.Spec.Description = "updated through v1alpha1"
		_, err = todos.TodoV1alpha1().Todos(ns).Update(ctx, old, metav1.UpdateOptions{})
		return err
	}))
	td := getTodo(t, ns, "started")
	assert.Equal(t, todov1.InProgress, td.Spec.State, "the state v1alpha1 cannot say survives a write through it")
	assert.Equal(t, "updated through v1alpha1", td.Spec.Description)
	assert.NotContains(t, td.Annotations, todov1alpha1.StateAnnotation)
}

// TestPrinterColumns: kubectl shows the columns the markers declare.
func TestPrinterColumns(t *testing.T) {
	t.Parallel()
	ns := kit.Namespace(t)
	createTodo(t, ns, "columns", todov1.TodoSpec{Title: "Columns"})
	if kit.Env == nil {
		t.Skip("needs the local control plane's kubectl: run without OPTEST_USE_EXISTING_CLUSTER")
	}
	out, err := exec.Command(kit.Env.Binaries.Kubectl, "--kubeconfig", kit.Env.Kubeconfig, "get", "todos", "-n", ns).CombinedOutput()
	require.NoError(t, err, string(out))
	header := strings.Fields(strings.SplitN(string(out), "\n", 2)[0])
	assert.Equal(t, []string{"NAME", "TITLE", "STATE", "DUE", "OVERDUE", "AGE"}, header)
}

// TestManifestIsAcceptedByTheServer dry-runs the cluster manifest, less its
// webhook configurations and its CRD: the operator of this package, run
// locally, has registered configurations of the same names and the CRD's
// conversion stanza with its 127.0.0.1 URL, and a dry-run apply would
// merge the Service into them (pkg/manifest's tests dry-run those on their
// own).
func TestManifestIsAcceptedByTheServer(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("deploy/todo-operator.yaml")
	require.NoError(t, err)
	var docs []string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		if strings.Contains(doc, "\nkind: ValidatingWebhookConfiguration\n") || strings.Contains(doc, "\nkind: MutatingWebhookConfiguration\n") || strings.Contains(doc, "\nkind: CustomResourceDefinition\n") {
			continue
		}
		docs = append(docs, doc)
	}
	assert.Len(t, docs, strings.Count(string(data), "\n---\n")-2, "the manifest has the CRD and both webhook configurations")
	path := filepath.Join(t.TempDir(), "todo-operator.yaml")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(docs, "\n---\n")), 0o600))
	out, err := optest.DryRun(context.Background(), kit.Config, path)
	require.NoError(t, err, out)
	assert.Contains(t, out, "deployment.apps/todo-operator (server dry run)")
	assert.Contains(t, out, "service/todo-operator-webhook (server dry run)")
}

// TestDeleteWhileOperatorIsDown is not parallel: it stops the package's
// operator and deletes a Todo. The validating webhook has no delete check,
// so it is not registered for DELETE and the deletion goes through with
// the operator down, while a create is still refused (the webhook fails
// closed). The finalizer keeps the Todo, unarchived, until the operator is
// back and has archived it.
func TestDeleteWhileOperatorIsDown(t *testing.T) {
	waitForWebhooks(t)
	ctx := context.Background()
	ns := kit.Namespace(t)
	createTodo(t, ns, "while-down", todov1.TodoSpec{Title: "Deleted while the operator was down"})
	waitTodo(t, ns, "while-down", "the finalizer", func(td *todov1.Todo) bool { return len(td.Finalizers) == 1 })

	require.NoError(t, kit.StopOperator())
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = kit.StartOperator(ctx)
		}
	})
	require.NoError(t, todos.TodoV1().Todos(ns).Delete(ctx, "while-down", metav1.DeleteOptions{}),
		"a deletion needs no operator: the webhook does not check deletions")
	_, err := todos.TodoV1().Todos(ns).Create(ctx, &todov1.Todo{ObjectMeta: metav1.ObjectMeta{Name: "refused"}, Spec: todov1.TodoSpec{Title: "Refused"}}, metav1.CreateOptions{})
	require.Error(t, err, "a create still fails closed")
	assert.Contains(t, err.Error(), `failed calling webhook`)
	td := getTodo(t, ns, "while-down")
	assert.NotNil(t, td.DeletionTimestamp, "deletion requested")
	_, ok := archived(t, ns, "while-down")
	assert.False(t, ok, "not archived while the operator is down")

	start := time.Now()
	require.NoError(t, kit.StartOperator(ctx))
	restarted = true
	optest.WaitForDeletion(t, "the Todo deleted once the operator was back", todoGetter(ns, "while-down"))
	t.Logf("deleted with the operator down; archived and gone %v after the restart began", time.Since(start).Round(time.Millisecond))
	_, ok = archived(t, ns, "while-down")
	assert.True(t, ok, "the operator archived the Todo before removing its finalizer")
}

func meta(td *todov1.Todo, typ string) bool { return apis.IsTrue(td, typ) }

func assertEvent(t *testing.T, ns, typ, reason, note string) {
	t.Helper()
	optest.Eventually(t, "a "+reason+" event", func(ctx context.Context) (bool, error) {
		list, err := kit.Clientset.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.Type == typ && e.Reason == reason && strings.Contains(e.Note, note) {
				return true, nil
			}
		}
		return false, nil
	})
}
