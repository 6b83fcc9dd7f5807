package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	todov1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
	"github.com/opgen-sdk/opgen/examples/todo-operator/pkg/generated/clientset/versioned"
	typedtodov1 "github.com/opgen-sdk/opgen/examples/todo-operator/pkg/generated/clientset/versioned/typed/todo/v1"
)

// TestEveryDeleteIsArchivedAtEveryWorkerCount: with webhooks off (the
// finalizer comes from the operator, not at admission), rounds of 50
// Todos created 100 ms apart and 50 at once, each deleted right after its
// create (without a finalizer it is gone at once, and its Delete is a late
// one, from its last state), against the todo-operator at 2, 4 and 8 workers. A Todo is
// often gone before the operator's finalizer could land; the operator saw
// its create, so it owes it a Delete: every Todo must be in the archive,
// and none may come back. At 8 workers 4 to 5 of 100 once went
// unarchived, never named in the operator's log.
func TestEveryDeleteIsArchivedAtEveryWorkerCount(t *testing.T) {
	rounds := 1
	if full() {
		rounds = 3
	}
	bin := buildTodoOperator(t)
	for _, workers := range []int{2, 4, 8} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			t.Parallel()
			ns := env.Namespace(t)
			logPath := filepath.Join(t.TempDir(), "operator.log")
			startOperator(t, bin, ns, logPath, "--workers", fmt.Sprint(workers), "-v=1")
			defer func() {
				if t.Failed() {
					if b, err := os.ReadFile(logPath); err == nil {
						t.Logf("operator log:\n%s", b)
					}
				}
			}()
			cfg := unthrottled()
			todos := versioned.NewForConfigOrDie(cfg).TodoV1().Todos(ns)
			ctx := context.Background()
			eventuallyWithin(t, "the operator to put its finalizer on a probe Todo (its watch is up)", 2*time.Minute, func() bool {
				td, err := todos.Get(ctx, "probe", metav1.GetOptions{})
				if err != nil {
					_, _ = todos.Create(ctx, &todov1.Todo{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: todov1.TodoSpec{Title: "probe"}}, metav1.CreateOptions{})
					return false
				}
				return len(td.Finalizers) > 0
			})
			require.NoError(t, todos.Delete(ctx, "probe", metav1.DeleteOptions{}))
			for round := range rounds {
				names := deleteBurst(t, todos, fmt.Sprintf("r%d-", round))
				eventuallyWithin(t, "the operator to finish every delete of the round", 3*time.Minute, func() bool {
					list, err := todos.List(ctx, metav1.ListOptions{})
					return err == nil && len(list.Items) == 0
				})
				// A Todo deleted before its finalizer landed is gone at once;
				// its late Delete may still wait in the queue. Each Delete
				// that ran wrote the archive before it returned.
				var unarchived []string
				archive := func() bool {
					unarchived = unarchived[:0]
					cm, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns).Get(ctx, todoArchive, metav1.GetOptions{})
					if err != nil {
						unarchived = append(unarchived, names...)
						return false
					}
					for _, n := range names {
						if _, ok := cm.Data[n]; !ok {
							unarchived = append(unarchived, n)
						}
					}
					return len(unarchived) == 0
				}
				deadline := time.Now().Add(time.Minute)
				t.Logf("waiting up to 1m for every Todo of the round in the archive (late Deletes of Todos gone before their finalizer)")
				for !archive() && time.Now().Before(deadline) {
					time.Sleep(200 * time.Millisecond)
				}
				slices.Sort(unarchived)
				t.Logf("figures: workers=%d round %d: %d Todos created and deleted at once (50 at 10/s, 50 together), %d unarchived %v", workers, round+1, len(names), len(unarchived), unarchived)
				assert.Empty(t, unarchived, "Todos whose Delete never ran")
			}
			// Nothing the operator wrote brings a deleted Todo back.
			time.Sleep(2 * time.Second) // what a late write of the operator would take to land; a re-created Todo stays
			list, err := todos.List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			assert.Empty(t, list.Items, "Todos re-created after their delete")
		})
	}
}

// deleteBurst creates 50 Todos 100 ms apart and then 50 at once, each
// deleted right after its create, and returns their names.
func deleteBurst(t *testing.T, todos typedtodov1.TodoInterface, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	var (
		mu    sync.Mutex
		names []string
		errs  []error
	)
	createDelete := func(name string) {
		_, err := todos.Create(ctx, &todov1.Todo{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: todov1.TodoSpec{Title: "burst " + name}}, metav1.CreateOptions{})
		if err == nil {
			err = todos.Delete(ctx, name, metav1.DeleteOptions{})
		}
		mu.Lock()
		defer mu.Unlock()
		names = append(names, name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	for i := range 50 {
		createDelete(fmt.Sprintf("%ss%02d", prefix, i))
		time.Sleep(100 * time.Millisecond)
	}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() { createDelete(fmt.Sprintf("%sb%02d", prefix, i)) })
	}
	wg.Wait()
	require.Empty(t, errs)
	return names
}
