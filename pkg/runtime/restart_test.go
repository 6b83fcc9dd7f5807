package runtime_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestChangesWhileStoppedAreNotLost stops the operator, then deletes one
// object, changes the spec of another and leaves a third alone. After a
// restart the first gets Delete, the second Modify and the third
// Reconcile: the verb comes from the objects' state, not from events.
func TestChangesWhileStoppedAreNotLost(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	start := func(c *calls) *harness {
		h := newOperator(t, ns, nil, runtime.Options{})
		require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&deleter{handler{calls: c}}), runtime.ControllerOptions[*testapi.Gadget]{}))
		h.start()
		return h
	}
	c1 := &calls{}
	h1 := start(c1)
	for _, name := range []string{"deleted", "changed", "same"} {
		createGadget(t, ns, name, testapi.GadgetSpec{Size: 1})
	}
	for _, name := range []string{"deleted", "changed", "same"} {
		eventually(t, name+" handled", func() bool {
			g, err := getGadget(t, ns, name)
			return err == nil && g.Status.ObservedGeneration == 1 && len(g.Finalizers) == 1
		})
	}
	require.NoError(t, h1.stop())

	ctx := context.Background()
	require.NoError(t, gadgetClient(t, ns).Delete(ctx, "deleted", metav1.DeleteOptions{}))
	patchGadget(t, ns, "changed", `{"spec":{"size":5}}`)
	g, err := getGadget(t, ns, "deleted")
	require.NoError(t, err, "the finalizer keeps the object while the operator is down")
	require.NotNil(t, g.DeletionTimestamp)

	c2 := &calls{}
	start(c2)
	eventually(t, "Delete after the restart", func() bool { return count(c2.verbs("deleted"), plug.Delete) == 1 })
	eventually(t, "the deleted object to go", func() bool { _, err := getGadget(t, ns, "deleted"); return apierrors.IsNotFound(err) })
	eventually(t, "Modify after the restart", func() bool { return len(c2.of("changed")) > 0 })
	eventually(t, "Reconcile after the restart", func() bool { return len(c2.of("same")) > 0 })
	assert.Equal(t, plug.Modify, c2.of("changed")[0].verb)
	assert.Equal(t, plug.Reconcile, c2.of("same")[0].verb)
	assert.Zero(t, count(c2.verbs("same"), plug.Add), "no second Add after a restart")
}
