package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	todov1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
	"github.com/opgen-sdk/opgen/examples/todo-operator/pkg/generated/clientset/versioned"
	"github.com/opgen-sdk/opgen/test/testkit"
)

// TestOutageRecovery: kube-apiserver is stopped while the todo-operator
// runs, then started again. The operator logs the outage while it lasts,
// and a Todo created the moment the server is back is handled within 5
// seconds. client-go's reflectors alone backed off for up to 30 seconds
// and retried refused connections without a word: changes waited 32-49 s
// after a 60 s outage. The full form runs four outages of 60 s, leader
// election off once and on three times.
func TestOutageRecovery(t *testing.T) {
	outage, runs := 20*time.Second, []bool{false}
	if full() {
		outage, runs = 60*time.Second, []bool{false, true, true, true}
	}
	bin := buildTodoOperator(t)
	for i, election := range runs {
		t.Run(fmt.Sprintf("run%d-election=%v", i, election), func(t *testing.T) {
			ns := env.Namespace(t)
			logPath := filepath.Join(t.TempDir(), "operator.log")
			var extra []string
			if election {
				extra = []string{"--leader-elect=true", "--leader-elect-namespace", ns}
			}
			startOperator(t, bin, ns, logPath, extra...)
			todos := versioned.NewForConfigOrDie(env.Config).TodoV1().Todos(ns)
			ctx := context.Background()
			handled := func(name string) func() bool {
				return func() bool {
					td, err := todos.Get(ctx, name, metav1.GetOptions{})
					return err == nil && td.Status.ObservedGeneration == td.Generation
				}
			}
			_, err := todos.Create(ctx, &todov1.Todo{ObjectMeta: metav1.ObjectMeta{Name: "before"}, Spec: todov1.TodoSpec{Title: "before"}}, metav1.CreateOptions{})
			require.NoError(t, err)
			testkit.Eventually(t, "the Todo made before the outage handled", handled("before"))

			env.StopAPIServer()
			stopped := time.Now()
			t.Logf("kube-apiserver stopped for %v", outage)
			time.Sleep(outage)
			require.NoError(t, env.StartAPIServer(ctx))
			back := time.Now()
			down := back.Sub(stopped) // the restart itself takes seconds on a loaded machine
			_, err = todos.Create(ctx, &todov1.Todo{ObjectMeta: metav1.ObjectMeta{Name: "after"}, Spec: todov1.TodoSpec{Title: "after"}}, metav1.CreateOptions{})
			require.NoError(t, err)
			testkit.Eventually(t, "the Todo made after the outage handled", handled("after"))
			took := time.Since(back)
			t.Logf("outage of %v: a Todo created when kube-apiserver was back was handled %v later", outage, took.Round(time.Millisecond))
			assert.Less(t, took, 5*time.Second, "handled within 5s of the API server's return")
			log, err := os.ReadFile(logPath)
			require.NoError(t, err)
			byPath := outageLines(string(log))
			t.Logf("\"the API server is unreachable\" lines by watch: %v", byPath)
			assert.NotEmpty(t, byPath, "the outage is logged while it lasts")
			bound := int(down/(30*time.Second)) + 1 // one line when the wait starts, then one every 30 s
			if election {
				// The leader loses its lease during the outage and runtime.Main
				// runs a new operator, whose cache logs when its own wait starts.
				bound++
			}
			for path, n := range byPath {
				assert.LessOrEqual(t, n, bound, "%s: logged once per watch every 30 s (the API server was down %v)", path, down.Round(100*time.Millisecond))
			}
			if t.Failed() {
				t.Logf("operator log:\n%s", log)
			}
		})
	}
}

// unreachableLine is an operator's log line of a cache that waits for the
// API server, with the path of its list or watch.
var unreachableLine = regexp.MustCompile(`the API server is unreachable.*?path=(\S+)`)

// outageLines counts the "the API server is unreachable" lines of log by
// the path they name.
func outageLines(log string) map[string]int {
	out := map[string]int{}
	for _, m := range unreachableLine.FindAllStringSubmatch(log, -1) {
		out[m[1]]++
	}
	return out
}
