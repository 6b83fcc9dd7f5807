package runtime_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestPauseAnnotation: a paused object gets no action, Delete included,
// but a Paused event (once) and the Paused condition; unpausing resumes
// with the verb its state calls for and says so.
func TestPauseAnnotation(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	pauses := make(chan telemetry.ReconcilePaused, 100)
	telemetry.On(h.op.Telemetry(), func(e telemetry.ReconcilePaused) { pauses <- e })
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&deleter{handler{calls: c}}), runtime.ControllerOptions[*testapi.Gadget]{}))
	h.start()
	ctx := context.Background()
	_, err := gadgetClient(t, ns).Create(ctx, &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{
		Name: "g", Annotations: map[string]string{runtime.PauseAnnotation: "true"},
	}}, metav1.CreateOptions{})
	require.NoError(t, err)
	eventually(t, "Paused=True", func() bool { g, err := getGadget(t, ns, "g"); return err == nil && apis.IsTrue(g, apis.Paused) })
	patchGadget(t, ns, "g", `{"spec":{"size":3}}`)
	waitPaused(t, pauses, 2)
	assert.Empty(t, c.of("g"), "no action while paused")

	patchGadget(t, ns, "g", `{"metadata":{"annotations":{"opgen.dev/paused":null}}}`)
	eventually(t, "Add after unpausing, with Paused=False", func() bool {
		g, err := getGadget(t, ns, "g")
		return err == nil && len(c.of("g")) > 0 && !apis.IsTrue(g, apis.Paused) && g.Status.ObservedGeneration == 2
	})
	assert.Equal(t, plug.Add, c.of("g")[0].verb, "never handled: the first action is Add")
	eventually(t, "the Paused and Resumed events", func() bool {
		list, err := env.Clientset().EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		return err == nil && hasEvent(list.Items, "Normal", runtime.ReasonPaused, "paused") && hasEvent(list.Items, "Normal", runtime.ReasonResumed, "resumed")
	})

	// Paused again, deletion waits: the finalizer holds the object.
	patchGadget(t, ns, "g", `{"metadata":{"annotations":{"opgen.dev/paused":"true"}}}`)
	require.NoError(t, gadgetClient(t, ns).Delete(ctx, "g", metav1.DeleteOptions{}))
	waitPaused(t, pauses, 2)
	g, err := getGadget(t, ns, "g")
	require.NoError(t, err, "a paused object is not released by its finalizer")
	assert.NotNil(t, g.DeletionTimestamp)
	assert.Zero(t, count(c.verbs("g"), plug.Delete))
	patchGadget(t, ns, "g", `{"metadata":{"annotations":{"opgen.dev/paused":"false"}}}`)
	eventually(t, "Delete after unpausing, and the object to go", func() bool {
		_, err := getGadget(t, ns, "g")
		return apierrors.IsNotFound(err) && count(c.verbs("g"), plug.Delete) == 1
	})
}

// waitPaused waits for n more ReconcilePaused events: the controller saw
// the paused object's latest state and skipped it.
func waitPaused(t *testing.T, pauses chan telemetry.ReconcilePaused, n int) {
	t.Helper()
	for range n {
		eventually(t, "a paused action", func() bool {
			select {
			case <-pauses:
				return true
			default:
				return false
			}
		})
	}
}
