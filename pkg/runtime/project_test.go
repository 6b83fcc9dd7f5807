package runtime_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestProjectedCache: with ControllerOptions.Project, the handler sees
// only what the projection keeps of the spec, a change of a field
// projected away still runs Modify (generation moves), the status the
// handler derives from what it reads is written once and not again, and
// the server keeps every field of the spec: nothing the operator writes
// is built from the projected object. With CacheSpec too, the fields
// projected away are dropped before the decode: Project never sees them.
func TestProjectedCache(t *testing.T) {
	t.Parallel()
	t.Run("Project", func(t *testing.T) { testProjectedCache(t, nil) })
	t.Run("Project and CacheSpec", func(t *testing.T) { testProjectedCache(t, []string{"size"}) })
}

func testProjectedCache(t *testing.T, cacheSpec []string) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	c := &calls{}
	var mu sync.Mutex
	var seen []testapi.GadgetSpec
	var arrived []string // the messages Project saw
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c, fn: func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
		mu.Lock()
		seen = append(seen, a.Object.Spec)
		mu.Unlock()
		a.Object.Status.Count = a.Object.Spec.Size
		return nil
	}}), runtime.ControllerOptions[*testapi.Gadget]{
		Project: func(g *testapi.Gadget) {
			mu.Lock()
			arrived = append(arrived, g.Spec.Message)
			mu.Unlock()
			g.Spec = testapi.GadgetSpec{Size: g.Spec.Size}
		},
		CacheSpec: cacheSpec,
	}))
	h.start()
	statusWrites := func() int { return h.writes.count("PATCH", "/gadgets/g/status") }

	createGadget(t, ns, "g", testapi.GadgetSpec{Size: 3, Message: "hello"})
	eventually(t, "the status", func() bool {
		g, err := getGadget(t, ns, "g")
		return err == nil && g.Status.Count == 3 && g.Status.ObservedGeneration == 1
	})
	settle(t, c, "g")

	patchGadget(t, ns, "g", `{"spec":{"message":"changed"}}`)
	eventually(t, "the action of generation 2", func() bool {
		last, ok := c.last("g")
		return ok && last.generation == 2
	})
	eventually(t, "observedGeneration 2", func() bool {
		g, err := getGadget(t, ns, "g")
		return err == nil && g.Status.ObservedGeneration == 2
	})
	settle(t, c, "g")

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, seen)
	for _, s := range seen {
		assert.Equal(t, testapi.GadgetSpec{Size: 3}, s, "the handler sees only what the projection keeps")
	}
	require.NotEmpty(t, arrived)
	if cacheSpec != nil {
		for _, m := range arrived {
			assert.Empty(t, m, "CacheSpec drops the message before the decode")
		}
	} else {
		assert.Contains(t, arrived, "hello", "without CacheSpec the whole spec is decoded")
	}
	assert.Equal(t, []plug.Verb{plug.Add, plug.Modify}, c.verbs("g"), "a change of a field projected away still runs Modify")
	assert.Equal(t, 2, statusWrites(), "one status write per generation (observedGeneration), none more")
	g, err := getGadget(t, ns, "g")
	require.NoError(t, err)
	assert.Equal(t, testapi.GadgetSpec{Size: 3, Message: "changed"}, g.Spec, "the server keeps the fields projected away")
}
