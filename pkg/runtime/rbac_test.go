package runtime_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// contractRules are exactly the RBAC rules opgen's generator grants an
// operator that controls gadgets and owns ConfigMaps. The runtime must need
// no more.
var contractRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"test.opgen.dev"}, Resources: []string{"gadgets"}, Verbs: []string{"get", "list", "watch", "patch"}},
	{APIGroups: []string{"test.opgen.dev"}, Resources: []string{"gadgets/status"}, Verbs: []string{"patch"}},
	{APIGroups: []string{"test.opgen.dev"}, Resources: []string{"gadgets/finalizers"}, Verbs: []string{"update"}},
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "patch", "delete"}},
	{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update", "watch"}},
}

// TestLeastPrivilege runs the whole lifecycle, with descendants, status,
// finalizer, events and leader election, under a service account bound to
// contractRules only.
func TestLeastPrivilege(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	ctx := context.Background()
	rbac := env.Clientset().RbacV1()
	_, err := rbac.Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "operator"}, Rules: contractRules}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = rbac.RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "operator"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "operator"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "operator", Namespace: ns}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	cfg, err := env.ServiceAccountConfig(ctx, ns, "operator")
	require.NoError(t, err)
	hc, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	sa, err := testapi.NewForConfigAndClient(cfg, hc)
	require.NoError(t, err)
	eventually(t, "the role to take effect", func() bool {
		_, err := sa.Gadgets(ns).List(ctx, metav1.ListOptions{})
		return err == nil
	})

	h := newOperator(t, ns, cfg, runtime.Options{})
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&deleter{handler{calls: c, fn: func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
		if a.Verb == plug.Delete {
			return nil
		}
		a.Normal("Configured", "declared %d ConfigMaps", a.Object.Spec.Size)
		return configMaps(ctx, a)
	}}}), runtime.ControllerOptions[*testapi.Gadget]{Owns: []schema.GroupVersionKind{configMapGVK}}))

	h.start()
	eventually(t, "leadership", h.op.Leading)

	createGadget(t, ns, "g", testapi.GadgetSpec{Size: 2, Message: "hi"})
	eventually(t, "two ConfigMaps and the status", func() bool {
		g, err := getGadget(t, ns, "g")
		return err == nil && len(listConfigMaps(t, ns)) == 2 && g.Status.ObservedGeneration == 1 && len(g.Finalizers) == 1
	})
	patchGadget(t, ns, "g", `{"spec":{"size":1}}`)
	eventually(t, "the prune", func() bool { return len(listConfigMaps(t, ns)) == 1 })
	eventually(t, "a Normal event", func() bool {
		list, err := env.Clientset().EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		return err == nil && hasEvent(list.Items, "Normal", "Configured", "declared")
	})
	require.NoError(t, gadgetClient(t, ns).Delete(ctx, "g", metav1.DeleteOptions{}))
	eventually(t, "the object to go", func() bool { _, err := getGadget(t, ns, "g"); return apierrors.IsNotFound(err) })
	require.Zero(t, metric(t, h.op, "opgen_reconcile_errors_total", "controller", "gadget"), "an action failed under the contract's RBAC")
}
