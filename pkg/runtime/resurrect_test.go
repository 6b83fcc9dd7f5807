package runtime_test

import (
	"context"
	"testing"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// gadgetEnv is the plug.Env of a Gadget controller that deletes, writing
// through the admin client.
func gadgetEnv(t *testing.T) plug.Env[*testapi.Gadget] {
	return plug.Env[*testapi.Gadget]{
		GVK:          testapi.GroupVersion.WithKind("Gadget"),
		Controller:   "gadget",
		FieldManager: "test-operator",
		Finalizer:    "test.opgen.dev/finalizer",
		Deletes:      true,
		Client:       func(ns string) plug.Client[*testapi.Gadget] { return gadgetClient(t, ns) },
	}
}

// runStep runs one step on an action for obj, with a pipeline rest that
// succeeds, and returns whether the rest ran and its error.
func runStep(t *testing.T, step plug.Step[*testapi.Gadget], verb plug.Verb, obj *testapi.Gadget, edit func(*testapi.Gadget)) (bool, error) {
	a := plug.NewAction(verb, obj, testr.New(t))
	if edit != nil {
		edit(a.Object)
	}
	ran := false
	err := step.Run(context.Background(), a, func(context.Context) error { ran = true; return nil })
	return ran, err
}

// TestNoResurrection: a finalizer add, a finalizer removal and a status
// write made from a read of an object deleted before the write never
// create an object; a finalizer add from a read of an object deleted and
// created again under the same name does not touch the new one.
func TestNoResurrection(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	e := gadgetEnv(t)
	c := gadgetClient(t, ns)
	ctx := context.Background()

	stale := createGadget(t, ns, "gone", testapi.GadgetSpec{Size: 1})
	require.NoError(t, c.Delete(ctx, "gone", metav1.DeleteOptions{}))

	ran, err := runStep(t, plug.Finalizer(e), plug.Add, stale, nil)
	assert.NoError(t, err)
	assert.False(t, ran, "the action on a deleted object halts")
	_, err = runStep(t, plug.Finalizer(e), plug.Delete, stale, nil)
	assert.NoError(t, err, "removing the finalizer from a deleted object is done")
	_, err = runStep(t, plug.ApplyStatus(e), plug.Reconcile, stale, func(g *testapi.Gadget) { g.Status.Count = 7 })
	assert.NoError(t, err, "a status write to a deleted object is dropped")
	_, err = getGadget(t, ns, "gone")
	assert.True(t, apierrors.IsNotFound(err), "the deleted object was created again: %v", err)

	// Replaced: the same name, another UID.
	old := createGadget(t, ns, "replaced", testapi.GadgetSpec{Size: 1})
	require.NoError(t, c.Delete(ctx, "replaced", metav1.DeleteOptions{}))
	created := createGadget(t, ns, "replaced", testapi.GadgetSpec{Size: 2})
	ran, err = runStep(t, plug.Finalizer(e), plug.Add, old, nil)
	assert.NoError(t, err)
	assert.False(t, ran, "the action on a replaced object halts")
	now, err := getGadget(t, ns, "replaced")
	require.NoError(t, err)
	assert.Equal(t, created.UID, now.UID)
	assert.Empty(t, now.Finalizers, "the finalizer meant for the old object landed on the new one")

	// The live object still gets its finalizer, and loses it again.
	ran, err = runStep(t, plug.Finalizer(e), plug.Add, now, nil)
	assert.NoError(t, err)
	assert.True(t, ran)
	now, err = getGadget(t, ns, "replaced")
	require.NoError(t, err)
	assert.Equal(t, []string{e.Finalizer}, now.Finalizers)
	_, err = runStep(t, plug.Finalizer(e), plug.Delete, now, nil)
	assert.NoError(t, err)
	now, err = getGadget(t, ns, "replaced")
	require.NoError(t, err)
	assert.Empty(t, now.Finalizers)
}
