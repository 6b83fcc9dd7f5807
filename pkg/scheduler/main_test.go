package scheduler_test

import (
	"context"
	"slices"
	"testing"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/test/testkit"
)

// Private: the tests create Nodes, which are cluster-scoped, and a
// scheduler chooses among all Nodes, so another package's would change its
// choices; the example's Node has a fixed name.
var env = testenv.New(testenv.Options{Private: true})

func TestMain(m *testing.M) { env.Main(m) }

func newOperator(t *testing.T, ns string) *runtime.Operator {
	t.Helper()
	op, err := runtime.New(env.Config, runtime.Options{
		Name: "scheduler-test", Namespaces: []string{ns}, MetricsAddr: "0", HealthAddr: "0",
		LeaderElection: runtime.LeaderElectionOptions{Namespace: ns},
		Logger:         testr.New(t),
	})
	require.NoError(t, err)
	return op
}

func run(t *testing.T, op *runtime.Operator) {
	t.Helper()
	testkit.Run(t, op)
	eventually(t, "leadership", op.Leading)
}

func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, what, cond)
}

func podNamespace(t testing.TB) string { return testkit.PodNamespace(t, env) }

// createNode creates a Node (a plain API object: no kubelet runs it) with
// its Ready condition, deleted when t ends. A ready node also loses the
// not-ready taint the API server's admission puts on new nodes, as the
// node lifecycle controller (not running here) would do.
func createNode(t testing.TB, name string, labels map[string]string, ready bool, mutate ...func(*corev1.Node)) {
	t.Helper()
	ctx := context.Background()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	for _, m := range mutate {
		m(n)
	}
	nodes := env.Clientset().CoreV1().Nodes()
	n, err := nodes.Create(ctx, n, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = nodes.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady })
		n, err = nodes.Update(ctx, n, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, Reason: "Test", LastHeartbeatTime: metav1.Now()}}
	_, err = nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{})
	require.NoError(t, err)
}

func createPod(t testing.TB, ns, name, scheduler string) {
	t.Helper()
	no := false
	_, err := env.Clientset().CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			SchedulerName:                scheduler,
			AutomountServiceAccountToken: &no,
			Containers:                   []corev1.Container{{Name: "app", Image: "registry.example/app:1"}},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
}

func nodeOf(t testing.TB, ns, pod string) string {
	t.Helper()
	p, err := env.Clientset().CoreV1().Pods(ns).Get(context.Background(), pod, metav1.GetOptions{})
	require.NoError(t, err)
	return p.Spec.NodeName
}
