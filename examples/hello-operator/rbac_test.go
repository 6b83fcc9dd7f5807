package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/examples/hello-operator/internal/controller"
	"github.com/opgen-sdk/opgen/pkg/optest"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// TestReadingDeploymentsNeedsTheDerivedRule: the Deployment reader that
// NewGreetingController takes relies on the rule the generator derives
// for Deployments. The operator runs here under the generated manager
// role with that rule removed, bound in one namespace: the API server
// refuses its Deployment cache, and the runtime reports it. TestMain runs
// the same operator under the full role, where every test passes.
func TestReadingDeploymentsNeedsTheDerivedRule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := kit.Namespace(t)
	cs := kit.Clientset

	manager, err := cs.RbacV1().ClusterRoles().Get(ctx, "hello-operator-manager", metav1.GetOptions{})
	require.NoError(t, err)
	var rules []rbacv1.PolicyRule
	stripped := false
	for _, r := range manager.Rules {
		if i := slices.Index(r.Resources, "deployments"); i >= 0 && slices.Contains(r.APIGroups, "apps") {
			r.Resources = slices.Delete(slices.Clone(r.Resources), i, i+1)
			stripped = true
		}
		if len(r.Resources) > 0 {
			rules = append(rules, r)
		}
	}
	require.True(t, stripped, "the generated role has a rule on apps deployments")
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "hello-no-deployments-" + ns}, Rules: rules}
	_, err = cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.RbacV1().ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{}) })
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "hello-no-deployments", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "stripped", Namespace: ns}},
	}
	_, err = cs.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{})
	require.NoError(t, err)
	cfg, err := optest.ServiceAccountConfig(ctx, kit.Config, ns, "stripped")
	require.NoError(t, err)

	op, err := runtime.New(cfg, runtime.Options{
		Name:           "hello-operator",
		Namespaces:     []string{ns},
		MetricsAddr:    "0",
		HealthAddr:     "0",
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true},
	})
	require.NoError(t, err)
	require.NoError(t, controller.Setup(op))
	failed := make(chan error, 1)
	defer telemetry.On(op.Telemetry(), func(e telemetry.WatchFailed) {
		if e.GVK.Kind == "Deployment" {
			select {
			case failed <- e.Err:
			default:
			}
		}
	})()
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- op.Run(runCtx) }()
	defer func() { cancel(); <-done }()

	select {
	case err := <-failed:
		assert.True(t, apierrors.IsForbidden(err), "want a Forbidden error, got %v", err)
	case <-time.After(time.Minute):
		t.Fatal("waited a minute for the Deployment cache to fail under the role without Deployments")
	}
}
