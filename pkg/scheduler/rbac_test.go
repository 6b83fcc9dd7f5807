package scheduler_test

import (
	"context"
	"testing"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/scheduler"
)

// Rules are exactly what the package documentation says a scheduler
// needs: the generator grants these.
var (
	namespacedRules = []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"pods/binding"}, Verbs: []string{"create"}},
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}},
	}
	clusterRules = []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list", "watch"}},
	}
)

// TestLeastPrivilege schedules a Pod as a service account bound to the
// documented rules only.
func TestLeastPrivilege(t *testing.T) {
	t.Parallel()
	ns := podNamespace(t)
	ctx := context.Background()
	rbac := env.Clientset().RbacV1()
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "scheduler", Namespace: ns}}
	_, err := rbac.Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "scheduler"}, Rules: namespacedRules}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = rbac.RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "scheduler"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "scheduler"}, Subjects: subject}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-scheduler"}, Rules: clusterRules}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-scheduler"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ns + "-scheduler"}, Subjects: subject}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(context.Background(), ns+"-scheduler", metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(context.Background(), ns+"-scheduler", metav1.DeleteOptions{})
	})
	cfg, err := env.ServiceAccountConfig(ctx, ns, "scheduler")
	require.NoError(t, err)

	createNode(t, ns+"-cheap", map[string]string{"test": ns, "cheap": "true"}, true)
	op, err := runtime.New(cfg, runtime.Options{
		Name: "scheduler-test", Namespaces: []string{ns}, MetricsAddr: "0", HealthAddr: "0",
		LeaderElection: runtime.LeaderElectionOptions{Namespace: ns}, Logger: testr.New(t),
	})
	require.NoError(t, err)
	name := "cheap-" + ns
	require.NoError(t, scheduler.Register(op, cheapest(ns), scheduler.Options{Name: name}))
	run(t, op)
	createPod(t, ns, "p", name)
	eventually(t, "the Pod bound under the documented RBAC", func() bool { return nodeOf(t, ns, "p") == ns+"-cheap" })
	eventually(t, "the Scheduled event", func() bool { return countEvents(t, ns, scheduler.ReasonScheduled) == 1 })
	require.Zero(t, metric(t, op, "opgen_scheduler_bindings_total", "scheduler", name, "result", scheduler.ResultError))
}
