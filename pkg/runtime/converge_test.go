package runtime_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

var serviceGVK = corev1.SchemeGroupVersion.WithKind("Service")

// configMapAndService declares a labelled ConfigMap holding spec.message
// and a Service on port 80.
func configMapAndService(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
	a.Own(corev1ac.ConfigMap(a.Object.Name, "").
		WithLabels(map[string]string{"tier": "web"}).
		WithData(map[string]string{"message": a.Object.Spec.Message}))
	a.Own(corev1ac.Service(a.Object.Name, "").
		WithSpec(corev1ac.ServiceSpec().
			WithSelector(map[string]string{"app": a.Object.Name}).
			WithPorts(corev1ac.ServicePort().WithName("http").WithPort(80))))
	return nil
}

// converged reports whether the ConfigMap and Service of g are as
// configMapAndService declares them.
func converged(t *testing.T, ns string) bool {
	cm, err := env.Clientset().CoreV1().ConfigMaps(ns).Get(context.Background(), "g", metav1.GetOptions{})
	if err != nil {
		return false
	}
	svc, err := env.Clientset().CoreV1().Services(ns).Get(context.Background(), "g", metav1.GetOptions{})
	if err != nil {
		return false
	}
	return cm.Data["message"] == "hello" && cm.Labels["tier"] == "web" && cm.Annotations[plug.AppliedHashAnnotation] != "" &&
		len(svc.Spec.Ports) == 1 && svc.Spec.Ports[0].Port == 80 && svc.Spec.Ports[0].Name == "http" && svc.Spec.Selector["app"] == "g"
}

// TestDescendantsConverge: whatever changed a descendant (a foreign edit
// of ConfigMap data, a removed label, a replace that drops the
// applied-hash annotation, a Service port and selector edit, drift made
// while the operator was down), the next action reverts it, and a steady
// state writes nothing, and a restart over converged objects neither.
func TestDescendantsConverge(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	c := &calls{}
	start := func() *harness {
		h := newOperator(t, ns, nil, runtime.Options{})
		require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c, fn: configMapAndService}),
			runtime.ControllerOptions[*testapi.Gadget]{Owns: []schema.GroupVersionKind{configMapGVK, serviceGVK}}))
		h.start()
		return h
	}
	h := start()
	createGadget(t, ns, "g", testapi.GadgetSpec{Message: "hello"})
	eventually(t, "the ConfigMap and Service", func() bool { return converged(t, ns) })
	settle(t, c, "g")

	ctx := context.Background()
	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	svcs := env.Clientset().CoreV1().Services(ns)
	edits := []struct {
		name string
		edit func() error
	}{
		{"a foreign edit of ConfigMap data", func() error {
			_, err := cms.Patch(ctx, "g", types.MergePatchType, []byte(`{"data":{"message":"foreign"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"})
			return err
		}},
		{"a removed label", func() error {
			_, err := cms.Patch(ctx, "g", types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/labels/tier"}]`), metav1.PatchOptions{FieldManager: "kubectl-label"})
			return err
		}},
		{"a replace without the applied-hash annotation", func() error {
			cm, err := cms.Get(ctx, "g", metav1.GetOptions{})
			if err != nil {
				return err
			}
			cm.Annotations = nil
			cm.Data = map[string]string{"message": "replaced"}
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "kubectl-replace"})
			return err
		}},
		{"a Service port and selector edit", func() error {
			_, err := svcs.Patch(ctx, "g", types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/ports/0/name","value":"web"},{"op":"replace","path":"/spec/selector/app","value":"other"}]`), metav1.PatchOptions{FieldManager: "kubectl-edit"})
			return err
		}},
	}
	for _, e := range edits {
		require.NoError(t, e.edit(), e.name)
		eventually(t, "reverting "+e.name, func() bool { return converged(t, ns) })
	}

	// Steady state: Reconciles of the owner and status changes of a
	// descendant by others write nothing.
	settle(t, c, "g")
	writes := h.writes.all()
	n := len(c.of("g"))
	patchGadget(t, ns, "g", `{"metadata":{"annotations":{"poke":"1"}}}`)
	_, err := cms.Patch(ctx, "g", types.MergePatchType, []byte(`{"metadata":{"annotations":{"someone":"else"}}}`), metav1.PatchOptions{FieldManager: "other"})
	require.NoError(t, err)
	eventually(t, "two more actions", func() bool { return len(c.of("g")) >= n+2 })
	settle(t, c, "g")
	assert.Equal(t, writes, h.writes.all(), "a steady state writes nothing")

	// Drift made while the operator is down is reverted after a start.
	require.NoError(t, h.stop())
	_, err = cms.Patch(ctx, "g", types.MergePatchType, []byte(`{"data":{"message":"while down"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"})
	require.NoError(t, err)
	require.NoError(t, edits[3].edit())
	require.False(t, converged(t, ns))
	h = start()
	eventually(t, "reverting drift made while down", func() bool { return converged(t, ns) })
	settle(t, c, "g")
	writes = h.writes.all()
	n = len(c.of("g"))
	patchGadget(t, ns, "g", `{"metadata":{"annotations":{"poke":"2"}}}`)
	eventually(t, "a Reconcile", func() bool { return len(c.of("g")) > n })
	settle(t, c, "g")
	assert.Equal(t, writes, h.writes.all(), "a steady state after a restart writes nothing")

	// A restart over converged objects writes nothing: the cache shows the
	// declarations' hashes and the operator's untouched managedFields.
	require.NoError(t, h.stop())
	h = start()
	eventually(t, "an action after the restart", func() bool { return len(c.of("g")) > n+1 })
	settle(t, c, "g")
	assert.Empty(t, h.writes.all(), "a restart over converged objects writes nothing")
}
