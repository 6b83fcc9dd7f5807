package runtime_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

const finalizer = "test.opgen.dev/finalizer"

func patchGadget(t *testing.T, ns, name, patch string) {
	t.Helper()
	_, err := gadgetClient(t, ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	require.NoError(t, err)
}

// TestLifecycle walks one object through every transition: Add (after the
// finalizer), Reconcile on a metadata-only change, Modify on a spec
// change, Delete, and the finalizer's removal.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&deleter{handler{calls: c}}), runtime.ControllerOptions[*testapi.Gadget]{}))
	h.start()

	createGadget(t, ns, "g", testapi.GadgetSpec{Size: 1})
	eventually(t, "Add", func() bool { return len(c.of("g")) > 0 })
	first := c.of("g")[0]
	assert.Equal(t, plug.Add, first.verb)
	assert.Equal(t, int64(1), first.generation)
	assert.Contains(t, first.finalizers, finalizer, "the finalizer is added before the first Add")
	eventually(t, "observedGeneration 1", func() bool {
		g, err := getGadget(t, ns, "g")
		return err == nil && g.Status.ObservedGeneration == 1
	})
	g, err := getGadget(t, ns, "g")
	require.NoError(t, err)
	assert.Contains(t, g.Finalizers, finalizer)

	// A label change is not a new generation: Reconcile.
	before := len(c.of("g"))
	patchGadget(t, ns, "g", `{"metadata":{"labels":{"touched":"yes"}}}`)
	eventually(t, "Reconcile after a label change", func() bool { l, _ := c.last("g"); return len(c.of("g")) > before && l.verb == plug.Reconcile })

	// A spec change is: Modify with the new generation.
	patchGadget(t, ns, "g", `{"spec":{"size":2}}`)
	eventually(t, "Modify", func() bool { l, _ := c.last("g"); return l.verb == plug.Modify && l.generation == 2 })
	eventually(t, "observedGeneration 2", func() bool {
		g, err := getGadget(t, ns, "g")
		return err == nil && g.Status.ObservedGeneration == 2
	})

	// Delete runs, then the finalizer goes and the object with it.
	require.NoError(t, gadgetClient(t, ns).Delete(context.Background(), "g", metav1.DeleteOptions{}))
	eventually(t, "Delete", func() bool { l, _ := c.last("g"); return l.verb == plug.Delete })
	eventually(t, "the object to go", func() bool { _, err := getGadget(t, ns, "g"); return apierrors.IsNotFound(err) })

	assert.Equal(t, 1, count(c.verbs("g"), plug.Add), "exactly one Add: %v", c.verbs("g"))
	assert.Equal(t, 1, count(c.verbs("g"), plug.Delete), "exactly one Delete: %v", c.verbs("g"))
}

func count(verbs []plug.Verb, v plug.Verb) int {
	n := 0
	for _, x := range verbs {
		if x == v {
			n++
		}
	}
	return n
}

// TestDeletionWithoutDeleter: a handler without Delete gets no finalizer;
// a finalizer of the controller left on an object (a Delete method was
// removed) is taken off on deletion, and an object held only by someone
// else's finalizer is left alone.
func TestDeletionWithoutDeleter(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c}), runtime.ControllerOptions[*testapi.Gadget]{}))
	h.start()
	ctx := context.Background()
	for name, finalizers := range map[string][]string{"ours": {finalizer}, "theirs": {"example.com/other"}, "none": nil} {
		_, err := gadgetClient(t, ns).Create(ctx, &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers}}, metav1.CreateOptions{})
		require.NoError(t, err)
		eventually(t, name+" added", func() bool { return len(c.of(name)) > 0 })
	}
	g, err := getGadget(t, ns, "none")
	require.NoError(t, err)
	assert.Empty(t, g.Finalizers, "no finalizer without a Delete method")

	for _, name := range []string{"ours", "theirs"} {
		require.NoError(t, gadgetClient(t, ns).Delete(ctx, name, metav1.DeleteOptions{}))
	}
	eventually(t, "ours to go", func() bool { _, err := getGadget(t, ns, "ours"); return apierrors.IsNotFound(err) })
	g, err = getGadget(t, ns, "theirs")
	require.NoError(t, err)
	assert.Equal(t, []string{"example.com/other"}, g.Finalizers)
	assert.Zero(t, count(c.verbs("theirs"), plug.Delete))
	patchGadget(t, ns, "theirs", `{"metadata":{"finalizers":null}}`)
}
