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
	"k8s.io/utils/ptr"

	"github.com/opgen-sdk/opgen/apis"
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

// TestStatusMergedOrApplied: a status change that only sets values goes
// as a merge patch (the operator's manager then holds those fields by
// update), a change of the conditions as a server-side apply; each is one
// write, the server ends with what the handler declared, and a condition
// another manager applied survives both.
func TestStatusMergedOrApplied(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	c := &calls{}
	var count atomic.Int32
	var ready atomic.Bool
	ready.Store(true)
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c, fn: func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
		a.Object.Status.Count = count.Load()
		st := metav1.ConditionFalse
		if ready.Load() {
			st = metav1.ConditionTrue
		}
		apis.SetCondition(&a.Object.Status.Conditions, a.Object.Generation, apis.Ready, st, "Test", "")
		return nil
	}}), runtime.ControllerOptions[*testapi.Gadget]{}))
	h.start()
	statusWrites := func() int { return h.writes.count("PATCH", "/gadgets/g/status") }
	conditions := func(g *testapi.Gadget) map[string]metav1.ConditionStatus {
		out := map[string]metav1.ConditionStatus{}
		for _, c := range g.Status.Conditions {
			out[c.Type] = c.Status
		}
		return out
	}
	step := func(what string, poke int, want func(*testapi.Gadget) bool) {
		t.Helper()
		n := len(c.of("g"))
		patchGadget(t, ns, "g", fmt.Sprintf(`{"metadata":{"annotations":{"poke":"%d"}}}`, poke))
		eventually(t, "a Reconcile", func() bool { return len(c.of("g")) > n })
		eventually(t, what, func() bool { g, err := getGadget(t, ns, "g"); return err == nil && want(g) })
		settle(t, c, "g")
	}

	createGadget(t, ns, "g", testapi.GadgetSpec{})
	eventually(t, "Ready", func() bool {
		g, err := getGadget(t, ns, "g")
		return err == nil && conditions(g)[apis.Ready] == metav1.ConditionTrue
	})
	settle(t, c, "g")
	require.Equal(t, 1, statusWrites())

	other := `{"apiVersion":"test.opgen.dev/v1","kind":"Gadget","metadata":{"name":"g"},"status":{"conditions":[{"type":"External","status":"True","reason":"Other","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`
	_, err := gadgetClient(t, ns).Patch(context.Background(), "g", types.ApplyPatchType, []byte(other),
		metav1.PatchOptions{FieldManager: "other", Force: ptr.To(true)}, "status")
	require.NoError(t, err)

	count.Store(7)
	step("the count merged", 1, func(g *testapi.Gadget) bool { return g.Status.Count == 7 })
	assert.Equal(t, 2, statusWrites())
	g, err := getGadget(t, ns, "g")
	require.NoError(t, err)
	assert.Equal(t, map[string]metav1.ConditionStatus{apis.Ready: metav1.ConditionTrue, "External": metav1.ConditionTrue}, conditions(g))
	var ops []string
	for _, m := range g.ManagedFields {
		if m.Manager == "test-operator" && m.Subresource == "status" {
			ops = append(ops, string(m.Operation))
		}
	}
	assert.ElementsMatch(t, []string{"Apply", "Update"}, ops, "the count by merge patch, the conditions by apply")

	ready.Store(false)
	step("Ready False", 2, func(g *testapi.Gadget) bool { return conditions(g)[apis.Ready] == metav1.ConditionFalse })
	assert.Equal(t, 3, statusWrites())
	g, err = getGadget(t, ns, "g")
	require.NoError(t, err)
	assert.Equal(t, map[string]metav1.ConditionStatus{apis.Ready: metav1.ConditionFalse, "External": metav1.ConditionTrue}, conditions(g))
	assert.Equal(t, int32(7), g.Status.Count)
}
