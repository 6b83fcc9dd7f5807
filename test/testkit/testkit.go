// Package testkit holds what the tests of opgen's own packages share,
// beside the public kit pkg/optest. It lives in the test-only tree test/:
// only test files import it (TestLayers checks), and it may import pkg/,
// which internal/, the ground floor, may not.
package testkit

import (
	"context"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/rest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/optest"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

// Eventually polls cond every 20ms for up to 30s and fails t when it
// never held.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	require.NoError(t, err, "waited in vain for %s", what)
}

// Run runs op until t ends, when it checks that Run returned nil, and
// waits for its caches to sync.
func Run(t testing.TB, op *runtime.Operator) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	Eventually(t, "the caches to sync", op.Ready)
}

// PodNamespace is a namespace for t where Pods can be created: it has the
// default ServiceAccount, which no controller manager makes in a test
// environment (see the public optest.Namespace).
func PodNamespace(t testing.TB, env *testenv.Environment) string {
	t.Helper()
	return optest.Namespace(t, env.Clientset())
}

// Metric reads the first sample of the metric name in op's registry whose
// labels include the given label-value pairs: a counter's or gauge's
// value, a histogram's sample count; 0 when there is none.
func Metric(t testing.TB, op *runtime.Operator, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := op.Registry().Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if got[labels[i]] != labels[i+1] {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return 0
}

// Register is runtime.Register for tests that need only its error.
func Register[T apis.Object](op *runtime.Operator, kind runtime.Kind[T], h plug.Handler[T], opts runtime.ControllerOptions[T]) error {
	_, err := runtime.Register(op, kind, h, opts)
	return err
}

// NextSecond waits until the clock passes the second of obj's newest
// managedFields entry. Their times have second precision: the next write
// must be visibly newer for the written-version rule to see it.
func NextSecond(t testing.TB, obj metav1.Object) {
	t.Helper()
	var newest time.Time
	for _, e := range obj.GetManagedFields() {
		if e.Time != nil && e.Time.After(newest) {
			newest = e.Time.Time
		}
	}
	if d := time.Until(newest.Truncate(time.Second).Add(time.Second)); d > 0 {
		t.Logf("waiting %s for the clock to pass the second of %s's last write", d.Round(time.Millisecond), obj.GetName())
		time.Sleep(d)
	}
}

// ServiceAccount returns the config of the ServiceAccount name of ns,
// created in env and bound to a new ClusterRole of rules; the role and
// binding are deleted when t ends.
func ServiceAccount(t testing.TB, env *testenv.Environment, ns, name string, rules []rbacv1.PolicyRule) *rest.Config {
	t.Helper()
	ctx := context.Background()
	rbac := env.Clientset().RbacV1()
	role := ns + "-" + name
	_, err := rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}, Rules: rules}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(context.Background(), role, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(context.Background(), role, metav1.DeleteOptions{})
	})
	cfg, err := env.ServiceAccountConfig(ctx, ns, name)
	require.NoError(t, err)
	return cfg
}
