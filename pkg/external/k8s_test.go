package external_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/opgen-sdk/opgen/pkg/external"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// greetingConfigMap is the one child a Gadget asks for.
func greetingConfigMap(_ context.Context, g *testapi.Gadget) ([]*unstructured.Unstructured, error) {
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": g.Name + "-greeting", "namespace": g.Namespace, "labels": map[string]any{"app": g.Name}},
		"data":     map[string]any{"message": g.Spec.Message},
	}}
	return []*unstructured.Unstructured{cm}, nil
}

// TestK8sPhases: the K8s reconciler runs the external phases over a child
// ConfigMap against the real API server: Create applies it owned by the
// Gadget, a spec change is a Diff that Update repairs, a child changed by
// someone else is put back, and deleting the Gadget deletes the child.
func TestK8sPhases(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	op, err := runtime.New(env.Config, runtime.Options{
		Name: "k8s-phases", Namespaces: []string{ns}, MetricsAddr: "0", HealthAddr: "0",
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true}, Logger: testr.New(t),
	})
	require.NoError(t, err)
	kind, err := testapi.KindFor(op)
	require.NoError(t, err)
	r, err := external.NewK8s(env.Config, "k8s-phases", greetingConfigMap)
	require.NoError(t, err)
	require.NoError(t, testkit.Register(op, kind, plug.Handler[*testapi.Gadget](external.New(r)), runtime.ControllerOptions[*testapi.Gadget]{
		ReconcileEvery: time.Second, // Read and Diff again soon, to see the drift repaired
	}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })

	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	message := func() string {
		cm, err := cms.Get(context.Background(), "g-greeting", metav1.GetOptions{})
		if err != nil {
			return ""
		}
		return cm.Data["message"]
	}
	create(t, ns, "g", testapi.GadgetSpec{Message: "hello"})
	eventually(t, "the child ConfigMap", func() bool { return message() == "hello" })
	cm, err := cms.Get(context.Background(), "g-greeting", metav1.GetOptions{})
	require.NoError(t, err)
	g, err := get(t, ns, "g")
	require.NoError(t, err)
	ref := metav1.GetControllerOf(cm)
	require.NotNil(t, ref, "the Gadget controls its child")
	assert.Equal(t, g.UID, ref.UID)
	eventually(t, "Ready=Created", func() bool { return ready(t, ns, "g") })

	patch(t, ns, "g", `{"spec":{"message":"bonjour"}}`)
	eventually(t, "Update to follow the spec", func() bool { return message() == "bonjour" })

	cm, err = cms.Get(context.Background(), "g-greeting", metav1.GetOptions{})
	require.NoError(t, err)
	cm.Data["message"] = "tampered"
	_, err = cms.Update(context.Background(), cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	eventually(t, "the periodic Reconcile to repair the drift", func() bool { return message() == "bonjour" })

	require.NoError(t, gadgets(t, ns).Delete(context.Background(), "g", metav1.DeleteOptions{}))
	eventually(t, "the child to be deleted with the Gadget", func() bool {
		_, err := cms.Get(context.Background(), "g-greeting", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	eventually(t, "the Gadget to go", func() bool { return gone(t, ns, "g") })
}
