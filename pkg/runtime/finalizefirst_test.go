package runtime_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/lanes"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestFinalizerFirst: with one worker whose handler is busy, new objects
// of a kind with a Delete get their finalizer before any queued action
// runs: a burst of new objects waits behind a slow first action, yet every
// one is protected as soon as the worker is free, and the handler has
// entered only that first action. Changes someone made to older objects,
// queued before the burst, wait behind those finalizers too, but for no
// more than lanes.FinalizeBurst of them: the burst of 8 lets one change
// through after the first 4 finalizers, so that a stream of new objects
// cannot hold back all other work. Before, the worker ran the first queued
// object's whole action (and stayed in its handler) while the others had
// no finalizer.
func TestFinalizerFirst(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{Workers: 1, ShutdownTimeout: time.Second})
	release, ended := make(chan struct{}), make(chan struct{})
	entered := make(chan string, 100)
	names := make([]string, 8)
	for i := range names {
		names[i] = fmt.Sprintf("g%d", i)
	}
	unprotected := make(chan int, 100) // new Gadgets without the finalizer when a change ran, if any
	c := &calls{}
	ctrl, err := runtime.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&deleter{handler{calls: c, fn: func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
		if a.Verb == plug.Modify && strings.HasPrefix(a.Object.Name, "old") {
			without := 0
			for _, n := range names {
				if g, err := getGadget(t, ns, n); err == nil && !slices.Contains(g.Finalizers, finalizer) {
					without++
				}
			}
			if without > 0 {
				unprotected <- without
			}
			return nil
		}
		if a.Verb != plug.Add || strings.HasPrefix(a.Object.Name, "old") {
			return nil
		}
		entered <- a.Object.Name
		gate := ended // every handler but the blocker's holds its worker to the end
		if a.Object.Name == "blocker" {
			gate = release
		}
		select {
		case <-gate:
		case <-ctx.Done():
		}
		return nil
	}}}), runtime.ControllerOptions[*testapi.Gadget]{})
	require.NoError(t, err)
	t.Cleanup(func() { close(ended) }) // runs before the operator's stop (cleanups run last first)
	h.start()
	olds := []string{"old0", "old1", "old2", "old3"}
	for _, n := range olds {
		createGadget(t, ns, n, testapi.GadgetSpec{})
	}
	eventually(t, "the older Gadgets handled", func() bool {
		for _, n := range olds {
			if len(c.of(n)) == 0 {
				return false
			}
		}
		return true
	})
	createGadget(t, ns, "blocker", testapi.GadgetSpec{})
	require.Equal(t, "blocker", <-entered)
	for _, n := range olds { // changes someone made, queued ahead of the burst
		patchGadget(t, ns, n, `{"spec":{"message":"changed"}}`)
	}
	for _, n := range names {
		createGadget(t, ns, n, testapi.GadgetSpec{})
	}
	// The burst is queued behind the blocked worker before it is freed.
	eventually(t, "the cache to hold the burst", func() bool {
		for _, n := range names {
			if _, ok := ctrl.Get(cache.ObjectName{Namespace: ns, Name: n}); !ok {
				return false
			}
		}
		return true
	})
	close(release)
	eventually(t, "the finalizer on every new Gadget while the worker is busy in one handler", func() bool {
		for _, n := range names {
			g, err := getGadget(t, ns, n)
			if err != nil || !slices.Contains(g.Finalizers, finalizer) {
				return false
			}
		}
		return true
	})
	require.Equal(t, "g0", <-entered, "the first queued action runs after the finalizers")
	require.Empty(t, entered, "the handler ran more than the one action its worker is stuck in")
	eventually(t, "the changes to the older Gadgets handled", func() bool {
		for _, n := range olds {
			if len(c.of(n)) < 2 {
				return false
			}
		}
		return true
	})
	var without []int
	for len(unprotected) > 0 {
		without = append(without, <-unprotected)
	}
	require.Equal(t, []int{len(names) - lanes.FinalizeBurst}, without,
		"one change queued before the burst runs after the first %d finalizers, none before them, the others after all", lanes.FinalizeBurst)
}

// TestFinalizerFirstLeavesTheCacheAlone: the finalizer goes on through a
// copy, never into the informer's object, which the event handlers read
// at the same time (a torn finalizers slice crashed an operator in
// GenerationOrMetadataChanged under churn). While the only worker is busy, the
// test holds the cached object of a new Gadget; once the finalizer is on
// (a newer object in the cache), the held one must still lack it. Before,
// finalizeFirst wrote it into the cached object.
func TestFinalizerFirstLeavesTheCacheAlone(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{Workers: 1, ShutdownTimeout: time.Second})
	release := make(chan struct{})
	entered := make(chan string, 10)
	ctrl, err := runtime.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&deleter{handler{calls: &calls{}, fn: func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
		if a.Verb == plug.Add && a.Object.Name == "blocker" {
			entered <- a.Object.Name
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return nil
	}}}), runtime.ControllerOptions[*testapi.Gadget]{})
	require.NoError(t, err)
	h.start()
	createGadget(t, ns, "blocker", testapi.GadgetSpec{})
	require.Equal(t, "blocker", <-entered)
	createGadget(t, ns, "fresh", testapi.GadgetSpec{})
	key := cache.ObjectName{Namespace: ns, Name: "fresh"}
	var held *testapi.Gadget
	eventually(t, "the cache to hold the new Gadget", func() bool {
		var ok bool
		held, ok = ctrl.Get(key)
		return ok
	})
	require.Empty(t, held.Finalizers, "the worker is busy: no finalizer yet")
	close(release)
	eventually(t, "the finalizer in the cache", func() bool {
		g, ok := ctrl.Get(key)
		return ok && len(g.Finalizers) > 0
	})
	require.Empty(t, held.Finalizers, "the cached object the finalizer write started from was changed in place")
}
