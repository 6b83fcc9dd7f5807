package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/pkg/optest"
)

// TestTwoOperatorsRunSideBySide starts hello-operator and todo-operator as
// `make run` does (the operator's main with the kubeconfig's cluster and
// OPGEN_POD_NAMESPACE, no port flags) on one machine against one control
// plane: both choose free ports, say which on their "serving" line, and
// become ready. They log JSON (--log-format=json -v=1): every line parses,
// and every line of an action carries its controller, namespace, name,
// verb and reconcile ID.
func TestTwoOperatorsRunSideBySide(t *testing.T) {
	t.Parallel()
	if kit.Env == nil {
		t.Skip("runs the operators' binaries against the local control plane: run without " + optest.ExistingClusterEnv)
	}
	ctx := context.Background()
	crd, err := os.ReadFile("../todo-operator/config/crd/todo.example.com_todos.yaml")
	require.NoError(t, err)
	require.NoError(t, optest.Apply(ctx, kit.Config, crd))
	ns := kit.Namespace(t)

	var ops []*runningOperator
	for _, dir := range []string{".", "../todo-operator"} {
		ops = append(ops, startLikeMakeRun(t, dir, ns))
	}
	for _, op := range ops {
		op.waitReady(t)
	}
	createGreeting(t, ns, "side-by-side", "Hello from two operators")
	optest.Eventually(t, `hello-operator's "handled" line for the Greeting`, func(context.Context) (bool, error) {
		return strings.Contains(ops[0].log.String(), `"msg":"handled"`), nil
	})
	for _, op := range ops {
		require.NoError(t, op.stop(), "%s exits cleanly on SIGTERM; its log:\n%s", op.name, op.log.String())
	}

	actions := 0
	for _, op := range ops {
		actions += checkJSONLog(t, op.name, op.log.String())
	}
	assert.Positive(t, actions, "no action line was logged")
}

// runningOperator is an operator binary run for a test.
type runningOperator struct {
	name string
	cmd  *exec.Cmd
	log  *syncBuffer
	done chan error
}

// startLikeMakeRun builds the operator in dir and runs it as the
// scaffold's `make run` does: OPGEN_POD_NAMESPACE set, the kubeconfig's
// cluster, the default (free) ports. It watches ns only, to leave the
// other tests' namespaces alone (make run watches all).
func startLikeMakeRun(t *testing.T, dir, ns string) *runningOperator {
	t.Helper()
	bin := buildOperator(t, dir)
	// No admission webhooks: todo-operator's fail closed and are
	// cluster-wide, so registering them here would take them from the
	// todo-operator package's tests that may run at the same time on the
	// shared control plane, and leave them pointing at a stopped process.
	return startProcess(t, filepath.Base(bin), bin, []string{"--log-format=json", "-v=1", "--webhook-bind-address=0"},
		append(os.Environ(), "KUBECONFIG="+kit.Env.Kubeconfig, "OPGEN_POD_NAMESPACE="+ns, "OPGEN_WATCH_NAMESPACE="+ns))
}

// buildOperator builds the operator in dir, as go run does, and returns
// its binary, named after dir.
func buildOperator(t *testing.T, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	require.NoError(t, err)
	name := filepath.Base(abs)
	bin := filepath.Join(t.TempDir(), name)
	t.Logf("building %s (go build, as go run does; may take a minute)", name)
	out, err := exec.Command("go", "build", "-o", bin, dir).CombinedOutput()
	require.NoError(t, err, "go build %s:\n%s", dir, out)
	return bin
}

// waitReady reads the addresses from the "serving" line and waits for
// /readyz to answer 200.
func (op *runningOperator) waitReady(t *testing.T) {
	t.Helper()
	var serving struct{ Metrics, Health, Ready string }
	optest.Eventually(t, op.name+`'s "serving" line`, func(context.Context) (bool, error) {
		for _, line := range strings.Split(op.log.String(), "\n") {
			if strings.Contains(line, `"msg":"serving"`) {
				return true, json.Unmarshal([]byte(line), &serving)
			}
		}
		return false, op.exited()
	})
	t.Logf("%s serves metrics at %s, readiness at %s", op.name, serving.Metrics, serving.Ready)
	assert.True(t, strings.HasPrefix(serving.Metrics, "https://"), "secure metrics by default: %s", serving.Metrics)
	optest.Eventually(t, op.name+" to answer 200 on "+serving.Ready, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, serving.Ready, nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, op.exited()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, op.exited()
	})
}

// exited returns an error when the operator is no longer running.
func (op *runningOperator) exited() error {
	select {
	case err := <-op.done:
		op.done <- err
		return fmt.Errorf("%s exited (%v); its log:\n%s", op.name, err, op.log.String())
	default:
		return nil
	}
}

func (op *runningOperator) stop() error {
	_ = op.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-op.done:
		op.done <- err
		return err
	case <-time.After(60 * time.Second):
		return fmt.Errorf("%s did not exit within 60s of SIGTERM", op.name)
	}
}

// checkJSONLog checks that every line of log is a JSON object and that
// every action line (one with a reconcile ID, or the Logger step's) names
// the action fully; it returns the number of action lines.
func checkJSONLog(t *testing.T, name, log string) int {
	t.Helper()
	actions := 0
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if !assert.NoError(t, json.Unmarshal(sc.Bytes(), &line), "%s logged a line that is not JSON: %s", name, sc.Text()) {
			continue
		}
		_, hasID := line["reconcileID"]
		if !hasID && line["msg"] != "handling" && line["msg"] != "handled" {
			continue
		}
		actions++
		for _, key := range []string{"controller", "namespace", "name", "verb", "reconcileID"} {
			assert.NotEmpty(t, line[key], "%s: an action line without %s: %s", name, key, sc.Text())
		}
	}
	require.NoError(t, sc.Err())
	return actions
}

// syncBuffer is a bytes.Buffer safe for a process's output and a test's
// reads at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
