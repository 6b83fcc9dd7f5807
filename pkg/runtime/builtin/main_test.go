package builtin_test

import (
	"context"
	"testing"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/test/testkit"
)

var env = testenv.New(testenv.Options{})

func TestMain(m *testing.M) { env.Main(m) }

// newOperator makes an operator that watches ns, without election or
// servers, talking through cfg (the admin's when nil).
func newOperator(t *testing.T, ns string, cfg *rest.Config) *runtime.Operator {
	t.Helper()
	if cfg == nil {
		cfg = rest.CopyConfig(env.Config)
	}
	op, err := runtime.New(cfg, runtime.Options{
		Name: "builtin-test", Namespaces: []string{ns}, MetricsAddr: "0", HealthAddr: "0",
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true},
		Logger:         testr.New(t),
	})
	require.NoError(t, err)
	return op
}

func run(t *testing.T, op *runtime.Operator) { testkit.Run(t, op) }

func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, what, cond)
}

func podNamespace(t testing.TB) string { return testkit.PodNamespace(t, env) }

// createPod creates a Pod that never runs (there is no kubelet) in a
// namespace from podNamespace.
func createPod(t testing.TB, ns, name string, labels map[string]string) *corev1.Pod {
	t.Helper()
	no := false
	p, err := env.Clientset().CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: &no,
			Containers:                   []corev1.Container{{Name: "app", Image: "registry.example/app:1"}},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return p
}
