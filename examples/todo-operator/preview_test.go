package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	todov1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
	"github.com/opgen-sdk/opgen/pkg/optest"
)

// TestPreviewOfTheConvergedExample runs todo-operator's binary with
// --preview, as its ServiceAccount, over 200 converged Todos: it reports
// nothing, exits 0, and no Todo was written. Its dry runs pass the
// operator's own admission webhooks, which the running operator serves.
func TestPreviewOfTheConvergedExample(t *testing.T) {
	t.Parallel()
	if kit.Env == nil {
		t.Skip("runs the operator's binary against the local control plane: run without " + optest.ExistingClusterEnv)
	}
	const n = 200
	ns := kit.Namespace(t)
	for i := range n {
		createTodo(t, ns, fmt.Sprintf("t-%03d", i), todov1.TodoSpec{Title: fmt.Sprintf("preview %d", i), State: todov1.Pending})
	}
	written := func(ctx context.Context) (map[string]string, int, error) {
		l, err := todos.TodoV1().Todos(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, 0, err
		}
		out, done := map[string]string{}, 0
		for _, td := range l.Items {
			out[td.Name] = td.ResourceVersion
			if len(td.Finalizers) == 1 && td.Status.ObservedGeneration == td.Generation {
				done++
			}
		}
		return out, done, nil
	}
	var before map[string]string
	since := time.Now()
	optest.Eventually(t, "every Todo handled, and nothing written for 2 s", func(ctx context.Context) (bool, error) {
		now, done, err := written(ctx)
		if err != nil || done < n {
			optest.Saw(ctx, fmt.Sprintf("%d of %d handled", done, n))
			since = time.Now()
			return false, err
		}
		if !assert.ObjectsAreEqual(before, now) {
			before, since = now, time.Now()
		}
		return time.Since(since) > 2*time.Second, nil
	}, optest.Within(5*time.Minute), optest.Every(250*time.Millisecond))

	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	require.NoError(t, kit.Env.WriteKubeconfig(kit.Operator.Config, kubeconfig), "the operator's ServiceAccount")
	bin := filepath.Join(dir, "todo-operator")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build:\n%s", out)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "--preview", "--preview-format=json", "--kubeconfig="+kubeconfig)
	cmd.Env = append(os.Environ(), "OPGEN_WATCH_NAMESPACE="+ns)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	t.Logf("the preview of %d Todos took %s (the process, from its start to its exit)", n, time.Since(start))
	require.NoError(t, err, "exits 0 when nothing would change; its log:\n%s\nits report:\n%s", stderr.String(), stdout.String())
	var report struct {
		Objects []any `json:"objects"`
		Events  []any `json:"events"`
		Summary struct {
			Text string `json:"text"`
		} `json:"summary"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &report), stdout.String())
	assert.Empty(t, report.Objects)
	assert.Empty(t, report.Events)
	assert.Equal(t, "0 objects would change, 0 writes, 0 events", report.Summary.Text)
	after, _, err := written(context.Background())
	require.NoError(t, err)
	assert.Equal(t, before, after, "the preview wrote nothing")
}
