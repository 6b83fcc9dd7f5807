package runtime_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// history is a controller whose children accumulate: every generation
// of a Gadget creates a ConfigMap of its own, and the controller keeps the
// last three, deleting older ones itself. It uses opgen's API alone.
type history struct {
	configMaps *runtime.Reader[*corev1.ConfigMap]

	mu      sync.Mutex
	created []string // by CreateNow, with the branch taken
}

func (h *history) Reconcile(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
	if a.Object.Spec.Message == "prune" {
		// The history is cleared: undeclared ConfigMaps go, this once.
		a.SetPrunePolicy(configMapGVK, plug.PruneUndeclared)
		return nil
	}
	name := fmt.Sprintf("%s-%d", a.Object.Name, a.Object.Generation)
	run := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: a.Object.Namespace},
		Data:       map[string]string{"message": a.Object.Spec.Message, "generation": strconv.FormatInt(a.Object.Generation, 10)},
	}
	got, err := plug.CreateNow(ctx, a, run)
	switch {
	case apierrors.IsAlreadyExists(err):
		h.record(name + " exists")
	case err != nil:
		return err // the action fails and is retried
	default:
		h.record(name + " created " + got.Data["message"])
	}
	children, err := h.configMaps.Owned(a.Object)
	if err != nil {
		return err
	}
	generation := func(cm *corev1.ConfigMap) int64 { g, _ := strconv.ParseInt(cm.Data["generation"], 10, 64); return g }
	slices.SortFunc(children, func(x, y *corev1.ConfigMap) int { return cmp.Compare(generation(y), generation(x)) }) // newest first
	for _, old := range children[min(3, len(children)):] {
		if err := plug.DeleteNow(ctx, a, old, metav1.DeletePropagationBackground); err != nil {
			return err
		}
	}
	return nil
}

func (h *history) record(s string) {
	h.mu.Lock()
	h.created = append(h.created, s)
	h.mu.Unlock()
}

// TestChildrenAccumulate: with the owned kind retained, children the
// handler does not declare again stay; it creates one per generation with
// CreateNow, branches on the server's answer, finds its children with
// Reader.Owned and deletes the oldest with DeleteNow, which the write
// metrics count; a retained kind is pruned again when an action says so.
func TestChildrenAccumulate(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	hist := &history{configMaps: runtime.Read[*corev1.ConfigMap](h.op, configMapGVK, "configmaps", true,
		func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().ConfigMaps().Informer()
		})}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](hist), runtime.ControllerOptions[*testapi.Gadget]{
		Owns: []schema.GroupVersionKind{configMapGVK}, Retain: []schema.GroupVersionKind{configMapGVK},
	}))
	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{Message: "m1"})
	cms := func() []string {
		list, err := env.Clientset().CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		var out []string
		for _, cm := range list.Items {
			if strings.HasPrefix(cm.Name, "g-") && cm.DeletionTimestamp == nil {
				out = append(out, cm.Name)
			}
		}
		slices.Sort(out)
		return out
	}
	eventually(t, "the first run's ConfigMap", func() bool { return slices.Equal(cms(), []string{"g-1"}) })
	for gen := 2; gen <= 5; gen++ {
		patchGadget(t, ns, "g", fmt.Sprintf(`{"spec":{"message":"m%d"}}`, gen))
		want := []string{}
		for i := max(1, gen-2); i <= gen; i++ {
			want = append(want, fmt.Sprintf("g-%d", i))
		}
		eventually(t, fmt.Sprintf("the last three ConfigMaps at generation %d", gen), func() bool { return slices.Equal(cms(), want) })
	}
	hist.mu.Lock()
	assert.Contains(t, hist.created, "g-5 created m5", "the handler saw the server's answer")
	hist.mu.Unlock()
	// A delete is counted when its response arrives, which can be after
	// this test's list already misses the object.
	eventually(t, "two deletes counted", func() bool {
		return metric(t, h.op, "opgen_api_writes_total", "controller", "gadget", "what", "delete") >= 2
	})
	cm, err := env.Clientset().CoreV1().ConfigMaps(ns).Get(context.Background(), "g-5", metav1.GetOptions{})
	require.NoError(t, err)
	assert.True(t, *metav1.GetControllerOf(cm).Controller, "owned by the Gadget")

	patchGadget(t, ns, "g", `{"spec":{"message":"prune"}}`)
	eventually(t, "every ConfigMap of g pruned by the action that said so", func() bool { return len(cms()) == 0 })
}

// TestTypedDeclaration: a typed object declared with plug.Object is
// applied, reverted after a foreign edit, and a restart over it writes
// nothing, as an apply configuration's.
func TestTypedDeclaration(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	c := &calls{}
	declare := func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
		a.Own(plug.Object(&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: a.Object.Name, Labels: map[string]string{"tier": "web"}},
			Data:       map[string]string{"message": a.Object.Spec.Message},
		}))
		return nil
	}
	start := func() *harness {
		h := newOperator(t, ns, nil, runtime.Options{})
		require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c, fn: declare}),
			runtime.ControllerOptions[*testapi.Gadget]{Owns: []schema.GroupVersionKind{configMapGVK}}))
		h.start()
		return h
	}
	h := start()
	createGadget(t, ns, "g", testapi.GadgetSpec{Message: "typed"})
	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	data := func() string {
		cm, err := cms.Get(context.Background(), "g", metav1.GetOptions{})
		if err != nil {
			return ""
		}
		return cm.Data["message"]
	}
	eventually(t, "the typed ConfigMap", func() bool { return data() == "typed" })
	_, err := cms.Patch(context.Background(), "g", "application/merge-patch+json", []byte(`{"data":{"message":"foreign"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"})
	require.NoError(t, err)
	eventually(t, "the foreign edit reverted", func() bool { return data() == "typed" })
	settle(t, c, "g")
	require.NoError(t, h.stop())
	n := len(c.of("g"))
	h = start()
	eventually(t, "an action after the restart", func() bool { return len(c.of("g")) > n })
	settle(t, c, "g")
	assert.Empty(t, h.writes.all(), "a restart over a converged typed declaration writes nothing")
}

// TestDeleteNowKeepsANewObjectOfTheSameName: DeleteNow deletes only the
// object it was given, by UID, on the real API server: a ConfigMap deleted
// and created again under the same name since the handler read it stays,
// and the stale delete is no error (what it named is gone).
func TestDeleteNowKeepsANewObjectOfTheSameName(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	ctx := context.Background()
	stale, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, cms.Delete(ctx, "child", metav1.DeleteOptions{}))
	fresh, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NotEqual(t, stale.UID, fresh.UID)

	var mu sync.Mutex
	var deleteErr error
	deleted := false
	c := &calls{}
	del := func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
		err := plug.DeleteNow(ctx, a, stale, "")
		mu.Lock()
		deleteErr, deleted = err, true
		mu.Unlock()
		return nil
	}
	h := newOperator(t, ns, nil, runtime.Options{})
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c, fn: del}),
		runtime.ControllerOptions[*testapi.Gadget]{Owns: []schema.GroupVersionKind{configMapGVK}, Retain: []schema.GroupVersionKind{configMapGVK}}))
	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{})
	eventually(t, "the handler's DeleteNow of the stale ConfigMap", func() bool { mu.Lock(); defer mu.Unlock(); return deleted })
	mu.Lock()
	assert.NoError(t, deleteErr, "what DeleteNow named is gone: no error")
	mu.Unlock()
	got, err := cms.Get(ctx, "child", metav1.GetOptions{})
	require.NoError(t, err, "the ConfigMap created since the handler read it stays")
	assert.Equal(t, fresh.UID, got.UID)
	assert.Nil(t, got.DeletionTimestamp)
}
