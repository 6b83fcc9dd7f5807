package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	todov1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
	"github.com/opgen-sdk/opgen/examples/todo-operator/pkg/generated/clientset/versioned"
	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/test/testkit"
)

// Private: the chaos tests stop and restart the servers.
var env = testenv.New(testenv.Options{CRDDirs: []string{"../../examples/todo-operator/config/crd", "../../test/testkit/testapi/crd"}, Private: true})

func TestMain(m *testing.M) {
	if id := os.Getenv(replicaEnv); id != "" {
		os.Exit(runReplica(id)) // a child process of TestReplicaKills
	}
	env.Main(m)
}

// full reports whether to run the full form of each test (make chaos sets
// OPGEN_CHAOS=full) rather than the quick one make test runs.
func full() bool { return os.Getenv("OPGEN_CHAOS") == "full" && !testing.Short() }

// todoArchive is the ConfigMap the todo-operator archives deleted Todos in
// (controller.ArchiveName, internal to the example).
const todoArchive = "todo-archive"

// buildTodoOperator builds examples/todo-operator into a temporary
// directory and returns the binary's path.
func buildTodoOperator(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "todo-operator")
	t.Logf("building the todo-operator binary (go build, may take a minute)")
	out, err := exec.Command("go", "build", "-o", bin, "../../examples/todo-operator").CombinedOutput()
	require.NoError(t, err, "go build ../../examples/todo-operator:\n%s", out)
	return bin
}

// startOperator runs the binary for ns, election off and servers
// disabled, with the extra flags; its output goes to a file in the test's
// directory.
func startOperator(t *testing.T, bin, ns, logPath string, extra ...string) *exec.Cmd {
	t.Helper()
	return startOperatorWith(t, nil, bin, ns, logPath, extra...)
}

// startOperatorWith is startOperator with environ added to the
// operator's environment.
func startOperatorWith(t *testing.T, environ []string, bin, ns, logPath string, extra ...string) *exec.Cmd {
	t.Helper()
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	args := append([]string{"--kubeconfig", env.Kubeconfig, "--watch-namespace", ns, "--leader-elect=false",
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0",
		// No admission webhooks: they fail closed, so a killed operator's
		// registration would refuse the writes these tests make while it
		// is down; the faults under test are the controller's.
		"--webhook-bind-address", "0"}, extra...)
	cmd := exec.Command(bin, args...)
	if environ != nil {
		cmd.Env = append(os.Environ(), environ...)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logf.Close()
	})
	return cmd
}

// TestKillMidDelete: the todo-operator process is killed (SIGKILL) while
// it works through a burst of deletes, then started again, for several
// rounds. Every deleted Todo must be archived exactly under its name (none
// lost), and every Todo must be gone (none stuck on its finalizer, none
// re-created).
func TestKillMidDelete(t *testing.T) {
	rounds, perRound := 2, 20 // the quick form, for make test
	if full() {
		rounds, perRound = 6, 100
	}
	ns := env.Namespace(t)
	bin := buildTodoOperator(t)
	logPath := filepath.Join(t.TempDir(), "operator.log")
	todos := versioned.NewForConfigOrDie(env.Config).TodoV1().Todos(ns)
	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	ctx := context.Background()
	op := startOperator(t, bin, ns, logPath)
	defer func() {
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("operator log:\n%s", b)
			}
		}
	}()
	totalLeft := 0
	for r := range rounds {
		names := make([]string, perRound)
		for i := range names {
			names[i] = fmt.Sprintf("r%d-%03d", r, i)
			_, err := todos.Create(ctx, &todov1.Todo{ObjectMeta: metav1.ObjectMeta{Name: names[i]}, Spec: todov1.TodoSpec{Title: "todo " + names[i]}}, metav1.CreateOptions{})
			require.NoError(t, err)
		}
		testkit.Eventually(t, fmt.Sprintf("round %d: the finalizer on all %d Todos", r, perRound), func() bool {
			list, err := todos.List(ctx, metav1.ListOptions{})
			if err != nil {
				return false
			}
			for _, td := range list.Items {
				if len(td.Finalizers) == 0 {
					return false
				}
			}
			return len(list.Items) == perRound
		})
		for _, n := range names {
			require.NoError(t, todos.Delete(ctx, n, metav1.DeleteOptions{}))
		}
		// Kill as soon as the operator has finished at least one delete:
		// it is then in the middle of the burst (unless it was faster).
		testkit.Eventually(t, fmt.Sprintf("round %d: the first Todo to go", r), func() bool {
			list, err := todos.List(ctx, metav1.ListOptions{})
			return err == nil && len(list.Items) < perRound
		})
		require.NoError(t, op.Process.Kill())
		_ = op.Wait()
		list, err := todos.List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		left := len(list.Items)
		totalLeft += left
		op = startOperator(t, bin, ns, logPath)
		testkit.Eventually(t, fmt.Sprintf("round %d: every Todo gone after the restart", r), func() bool {
			list, err := todos.List(ctx, metav1.ListOptions{})
			return err == nil && len(list.Items) == 0
		})
		archive, err := cms.Get(ctx, todoArchive, metav1.GetOptions{})
		require.NoError(t, err)
		var lost []string
		for _, n := range names {
			if _, ok := archive.Data[n]; !ok {
				lost = append(lost, n)
			}
		}
		require.Empty(t, lost, "round %d: deleted Todos never archived", r)
		t.Logf("round %d: %d Todos deleted, %d still there at kill -9, 0 lost, 0 stuck", r, perRound, left)
	}
	// Nothing came back while later rounds ran.
	list, err := todos.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Empty(t, list.Items, "Todos re-created after their delete")
	t.Logf("figures: %d rounds of %d deletes, %d Todos pending at the kills in all, 0 lost, 0 stuck, 0 re-created", rounds, perRound, totalLeft)
}
