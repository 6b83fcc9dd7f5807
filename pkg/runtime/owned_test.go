package runtime_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

var configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")

// configMaps declares spec.size ConfigMaps holding spec.message, and sets
// status.count.
func configMaps(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
	for i := range a.Object.Spec.Size {
		a.Own(corev1ac.ConfigMap(fmt.Sprintf("%s-%d", a.Object.Name, i), "").
			WithData(map[string]string{"message": a.Object.Spec.Message}))
	}
	a.Object.Status.Count = a.Object.Spec.Size
	return nil
}

func listConfigMaps(t *testing.T, ns string) map[string]corev1.ConfigMap {
	t.Helper()
	list, err := env.Clientset().CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	out := map[string]corev1.ConfigMap{}
	for _, cm := range list.Items {
		if cm.Name != "kube-root-ca.crt" {
			out[cm.Name] = cm
		}
	}
	return out
}

// TestDescendants: owned objects are created with an owner reference and
// the managed-by label, updated when the declaration changes, pruned when
// no longer declared, and never rewritten in a steady state.
func TestDescendants(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c, fn: configMaps}),
		runtime.ControllerOptions[*testapi.Gadget]{Owns: []schema.GroupVersionKind{configMapGVK}}))

	h.start()

	g := createGadget(t, ns, "g", testapi.GadgetSpec{Size: 2, Message: "hello"})
	eventually(t, "two ConfigMaps", func() bool { return len(listConfigMaps(t, ns)) == 2 })
	for _, cm := range listConfigMaps(t, ns) {
		assert.Equal(t, "hello", cm.Data["message"])
		assert.Equal(t, "test-operator", cm.Labels[plug.ManagedByLabelKey])
		require.Len(t, cm.OwnerReferences, 1)
		ref := cm.OwnerReferences[0]
		assert.Equal(t, g.UID, ref.UID)
		assert.Equal(t, "Gadget", ref.Kind)
		assert.True(t, *ref.Controller)
		assert.True(t, *ref.BlockOwnerDeletion)
		assert.NotEmpty(t, cm.Annotations[plug.AppliedHashAnnotation])
	}

	patchGadget(t, ns, "g", `{"spec":{"message":"bye"}}`)
	eventually(t, "updated ConfigMaps", func() bool {
		cms := listConfigMaps(t, ns)
		return len(cms) == 2 && cms["g-0"].Data["message"] == "bye" && cms["g-1"].Data["message"] == "bye"
	})

	patchGadget(t, ns, "g", `{"spec":{"size":1}}`)
	eventually(t, "g-1 pruned", func() bool { _, ok := listConfigMaps(t, ns)["g-1"]; return !ok })
	assert.Contains(t, listConfigMaps(t, ns), "g-0")
	eventually(t, "status.count 1", func() bool { g, err := getGadget(t, ns, "g"); return err == nil && g.Status.Count == 1 })

	// Steady state: more Reconciles, no writes at all.
	settle(t, c, "g")
	writes := h.writes.all()
	for i := range 3 {
		n := len(c.of("g"))
		patchGadget(t, ns, "g", fmt.Sprintf(`{"metadata":{"annotations":{"poke":"%d"}}}`, i))
		eventually(t, "a Reconcile", func() bool { l, _ := c.last("g"); return len(c.of("g")) > n && l.verb == plug.Reconcile })
	}
	settle(t, c, "g")
	assert.Equal(t, writes, h.writes.all(), "a steady state writes nothing")

	// A deleted owned object wakes the owner and is recreated (other
	// foreign changes: TestDescendantsConverge).
	n := len(c.of("g"))
	require.NoError(t, env.Clientset().CoreV1().ConfigMaps(ns).Delete(context.Background(), "g-0", metav1.DeleteOptions{}))
	eventually(t, "g-0 recreated", func() bool { _, ok := listConfigMaps(t, ns)["g-0"]; return ok })
	assert.Greater(t, len(c.of("g")), n)
}

// settle waits until the handler ran no action for name for 300ms, so that
// the reactions to the test's own writes are over.
func settle(t *testing.T, c *calls, name string) {
	t.Helper()
	last, since := len(c.of(name)), time.Now()
	eventually(t, "the controller to settle", func() bool {
		if n := len(c.of(name)); n != last {
			last, since = n, time.Now()
		}
		return time.Since(since) > 300*time.Millisecond
	})
}

// TestDescendantOfUnownedKind fails the action with the marker to add.
func TestDescendantOfUnownedKind(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	c := &calls{}
	secretGVK := corev1.SchemeGroupVersion.WithKind("Secret")
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c, fn: func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
		a.Own(corev1ac.Secret("s", ""))
		return nil
	}}), runtime.ControllerOptions[*testapi.Gadget]{Owns: []schema.GroupVersionKind{configMapGVK}, RateLimiter: slowRetries()}))

	_ = secretGVK
	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{})
	eventually(t, "Degraded with the marker", func() bool {
		g, err := getGadget(t, ns, "g")
		if err != nil {
			return false
		}
		for _, c := range g.Status.Conditions {
			if c.Type == "Degraded" && c.Status == metav1.ConditionTrue {
				return assert.Contains(t, c.Message, "+opgen:controller:owns=v1.Secret")
			}
		}
		return false
	})
}

// slowRetries backs off from one second, so that a test of a failing
// handler is not flooded with retries.
func slowRetries() workqueue.TypedRateLimiter[cache.ObjectName] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](time.Second, time.Minute)
}
