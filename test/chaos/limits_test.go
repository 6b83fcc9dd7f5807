package chaos

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	todov1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
	"github.com/opgen-sdk/opgen/examples/todo-operator/pkg/generated/clientset/versioned"
)

// TestClientLimits measures what the client limits cost: a burst of new
// Todos is created at once, and the todo-operator (two workers, each Todo
// costs a finalizer write, a status write and an Event) runs with each
// --kube-api-qps (burst twice that) in turn; the figure is how fast it
// handles the burst. It fails when a run does not handle every Todo. The
// default limits are sized from its figures (docs/reliability.md).
func TestClientLimits(t *testing.T) {
	if !full() {
		t.Skip("a measurement of a minute or more; run it with make chaos (OPGEN_CHAOS=full)")
	}
	const n = 100
	bin := buildTodoOperator(t)
	var table []string
	for _, qps := range []int{10, 25, 50, 100, -1} {
		ns := env.Namespace(t)
		todos := versioned.NewForConfigOrDie(unthrottled()).TodoV1().Todos(ns)
		logPath := filepath.Join(t.TempDir(), "operator.log")
		cmd := startOperator(t, bin, ns, logPath, "--kube-api-qps", fmt.Sprint(qps), "--kube-api-burst", fmt.Sprint(max(2*qps, 1)))
		ctx := context.Background()
		start := time.Now()
		for i := range n {
			name := fmt.Sprintf("b%03d", i)
			_, err := todos.Create(ctx, &todov1.Todo{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: todov1.TodoSpec{Title: name}}, metav1.CreateOptions{})
			require.NoError(t, err)
		}
		eventuallyWithin(t, fmt.Sprintf("--kube-api-qps=%d: the status of all %d Todos", qps, n), 3*time.Minute, func() bool {
			list, err := todos.List(ctx, metav1.ListOptions{})
			if err != nil {
				return false
			}
			done := 0
			for _, td := range list.Items {
				if len(td.Status.Conditions) > 0 {
					done++
				}
			}
			return done == n
		})
		took := time.Since(start)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		line := fmt.Sprintf("--kube-api-qps=%d: %d Todos in %s, %.1f Todos/s", qps, n, took.Round(10*time.Millisecond), n/took.Seconds())
		t.Log(line)
		table = append(table, line)
	}
	t.Logf("figures:\n%s", strings.Join(table, "\n"))
}
