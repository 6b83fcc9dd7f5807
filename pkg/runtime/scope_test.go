package runtime_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestNamespaceScope: an operator that watches two namespaces handles
// objects there and nowhere else.
func TestNamespaceScope(t *testing.T) {
	t.Parallel()
	ns1, ns2, other := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	h := newOperator(t, ns1, nil, runtime.Options{Namespaces: []string{ns1, ns2}})
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c}), runtime.ControllerOptions[*testapi.Gadget]{}))
	h.start()
	createGadget(t, other, "outside", testapi.GadgetSpec{})
	createGadget(t, ns1, "one", testapi.GadgetSpec{})
	createGadget(t, ns2, "two", testapi.GadgetSpec{})
	eventually(t, "both watched namespaces", func() bool { return len(c.of("one")) > 0 && len(c.of("two")) > 0 })
	assert.Empty(t, c.of("outside"))
}

// configMapKind is the Kind of a built-in kind, built from client-go's
// clientset and informers as generated glue builds it for custom kinds.
func configMapKind(cs kubernetes.Interface) runtime.Kind[*corev1.ConfigMap] {
	return runtime.Kind[*corev1.ConfigMap]{
		GVK:        configMapGVK,
		Resource:   "configmaps",
		Namespaced: true,
		ListWatch: func(ns string) *cache.ListWatch {
			return cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "configmaps", ns, fields.Everything())
		},
		Client: func(ns string) plug.Client[*corev1.ConfigMap] { return cs.CoreV1().ConfigMaps(ns) },
	}
}

// TestKindWithoutObservedGeneration: for a kind without
// status.observedGeneration the record of handled generations is in
// memory: first sight in a process is Add, later actions Reconcile.
func TestKindWithoutObservedGeneration(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	var verbs []plug.Verb
	done := make(chan plug.Verb, 10)
	record := func(_ context.Context, a *plug.Action[*corev1.ConfigMap]) error {
		if a.Object.Name == "cm" {
			done <- a.Verb
		}
		return nil
	}
	h := newOperator(t, ns, nil, runtime.Options{})
	require.NoError(t, testkit.Register(h.op, configMapKind(h.op.Clientset()),
		plug.Handler[*corev1.ConfigMap](plug.HandlerFuncs[*corev1.ConfigMap]{OnAdd: record, OnModify: record, OnReconcile: record}),
		runtime.ControllerOptions[*corev1.ConfigMap]{}))

	h.start()
	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	_, err := cms.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	verbs = append(verbs, <-done)
	_, err = cms.Patch(context.Background(), "cm", "application/merge-patch+json", []byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	verbs = append(verbs, <-done)
	assert.Equal(t, []plug.Verb{plug.Add, plug.Reconcile}, verbs)
}

// TestWatchAndFullInformerForOwnedKind: a Watch wakes the objects its Map
// names; an owned kind the handler reads through the shared client-go
// factory is served from that full informer, and its changes wake the
// owner.
func TestWatchAndFullInformerForOwnedKind(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	lister := h.op.Informers(ns).Core().V1().ConfigMaps().Lister()
	seen := make(chan string, 100)
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c, fn: func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
		if cm, err := lister.ConfigMaps(ns).Get(a.Object.Name + "-0"); err == nil {
			seen <- cm.Data["message"]
		}
		return configMaps(ctx, a)
	}}), runtime.ControllerOptions[*testapi.Gadget]{
		Owns: []schema.GroupVersionKind{configMapGVK},
		Watches: []runtime.Watch{{
			Kind: corev1.SchemeGroupVersion.WithKind("Secret"),
			Map: func(obj metav1.Object) []cache.ObjectName {
				return []cache.ObjectName{{Namespace: obj.GetNamespace(), Name: obj.GetLabels()["gadget"]}}
			},
		}},
	}))

	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{Size: 1, Message: "full"})
	eventually(t, "the owned ConfigMap", func() bool {
		_, err := lister.ConfigMaps(ns).Get("g-0")
		return err == nil
	})
	// The operator's own apply wakes nobody: a change of the owner does.
	patchGadget(t, ns, "g", `{"metadata":{"annotations":{"poke":"1"}}}`)
	eventually(t, "the handler to read its ConfigMap's data from the lister", func() bool {
		select {
		case m := <-seen:
			return m == "full"
		default:
			return false
		}
	})
	n := len(c.of("g"))
	_, err := env.Clientset().CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "s", Labels: map[string]string{"gadget": "g"}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	eventually(t, "a Reconcile from the watched Secret", func() bool { l, _ := c.last("g"); return len(c.of("g")) > n && l.verb == plug.Reconcile })
}
