package runtime_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestStatusWrittenOnlyOnChange counts writes to the status subresource:
// one for Add, none for a Reconcile that changes nothing, one for a
// Reconcile that changes the status.
func TestStatusWrittenOnlyOnChange(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	c := &calls{}
	var phase atomic.Value
	phase.Store("Ready")
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c, fn: func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
		a.Object.Status.Phase = phase.Load().(string)
		return nil
	}}), runtime.ControllerOptions[*testapi.Gadget]{}))

	h.start()
	statusWrites := func() int { return h.writes.count("PATCH", "/gadgets/g/status") }

	createGadget(t, ns, "g", testapi.GadgetSpec{})
	eventually(t, "the status", func() bool {
		g, err := getGadget(t, ns, "g")
		return err == nil && g.Status.Phase == "Ready" && g.Status.ObservedGeneration == 1
	})
	settle(t, c, "g")
	assert.Equal(t, 1, statusWrites(), "Add writes the status once")

	for i := range 3 {
		n := len(c.of("g"))
		patchGadget(t, ns, "g", fmt.Sprintf(`{"metadata":{"labels":{"poke":"%d"}}}`, i))
		eventually(t, "a Reconcile", func() bool { return len(c.of("g")) > n })
	}
	settle(t, c, "g")
	assert.Equal(t, 1, statusWrites(), "a Reconcile that changes nothing writes nothing")

	phase.Store("Busy")
	n := len(c.of("g"))
	patchGadget(t, ns, "g", `{"metadata":{"labels":{"poke":"again"}}}`)
	eventually(t, "a Reconcile", func() bool { return len(c.of("g")) > n })
	eventually(t, "the new phase", func() bool { g, err := getGadget(t, ns, "g"); return err == nil && g.Status.Phase == "Busy" })
	settle(t, c, "g")
	assert.Equal(t, 2, statusWrites(), "a changed status is written once")
}

// TestForeignStatusEditIsReverted: another writer sets status fields the
// handler computes as zero (0 and ""); the next action reverts them, and
// the steady state after writes nothing. The same edit made again is
// reverted again: the step once judged from the memory of its last write
// (the status it replaced), and an edit that put back exactly that status
// matched the memory forever.
func TestForeignStatusEditIsReverted(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	c := &calls{}
	h := newOperator(t, ns, nil, runtime.Options{})
	ctrl, err := runtime.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c, fn: func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
		a.Object.Status.Count, a.Object.Status.Phase = 0, "" // what this operator computes
		return nil
	}}), runtime.ControllerOptions[*testapi.Gadget]{})
	require.NoError(t, err)
	cachedPhase := func() string {
		g, _ := ctrl.Get(cache.ObjectName{Namespace: ns, Name: "g"})
		if g == nil {
			return "<none>"
		}
		return g.Status.Phase
	}
	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{})
	settle(t, c, "g")
	for round := range 2 {
		_, err = gadgetClient(t, ns).Patch(context.Background(), "g", types.MergePatchType, []byte(`{"status":{"count":5,"phase":"foreign"}}`),
			metav1.PatchOptions{FieldManager: "kubectl-patch"}, "status")
		require.NoError(t, err)
		eventually(t, "the foreign status edit in the cache", func() bool { return cachedPhase() == "foreign" })
		patchGadget(t, ns, "g", fmt.Sprintf(`{"metadata":{"annotations":{"poke":"%d"}}}`, round))
		eventually(t, fmt.Sprintf("the foreign status edit reverted (round %d)", round+1), func() bool {
			g, err := getGadget(t, ns, "g")
			return err == nil && g.Status.Count == 0 && g.Status.Phase == ""
		})
		settle(t, c, "g")
		eventually(t, "the revert in the cache", func() bool { return cachedPhase() == "" })
	}
	writes, n := len(h.writes.all()), len(c.of("g"))
	patchGadget(t, ns, "g", `{"metadata":{"annotations":{"poke":"steady"}}}`)
	eventually(t, "another action", func() bool { return len(c.of("g")) > n })
	settle(t, c, "g")
	assert.Equal(t, writes, len(h.writes.all()), "the steady state after the revert writes nothing")
}
