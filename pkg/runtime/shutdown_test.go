package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/internal/testapi"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// TestGracefulShutdown: after cancel, an in-flight handler finishes with a
// live context and Run waits for it; a handler that outlives
// ShutdownTimeout has its context cancelled.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	t.Run("in-flight work finishes", func(t *testing.T) {
		t.Parallel()
		ns := env.Namespace(t)
		h := newOperator(t, ns, nil, runtime.Options{ShutdownTimeout: time.Minute})
		entered, release := make(chan struct{}), make(chan struct{})
		ctxErr := make(chan error, 1)
		require.NoError(t, register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}, fn: func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
			close(entered)
			<-release
			ctxErr <- ctx.Err()
			a.Object.Status.Phase = "Done"
			return nil
		}}), runtime.ControllerOptions[*testapi.Gadget]{}))

		h.start()
		createGadget(t, ns, "g", testapi.GadgetSpec{})
		<-entered
		h.cancel()
		select {
		case err := <-h.done:
			t.Fatalf("Run returned (%v) while a handler was in flight", err)
		case <-time.After(100 * time.Millisecond):
		}
		close(release)
		select {
		case err := <-h.done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("Run did not return after the handler finished")
		}
		h.cancel = nil
		assert.NoError(t, <-ctxErr, "the handler's context stays live within the timeout")
		g, err := getGadget(t, ns, "g")
		require.NoError(t, err)
		assert.Equal(t, "Done", g.Status.Phase, "the in-flight action's status was written")
	})
	t.Run("timeout cancels handlers", func(t *testing.T) {
		t.Parallel()
		ns := env.Namespace(t)
		h := newOperator(t, ns, nil, runtime.Options{ShutdownTimeout: 200 * time.Millisecond})
		entered := make(chan struct{})
		require.NoError(t, register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}, fn: func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
			close(entered)
			<-ctx.Done()
			return ctx.Err()
		}}), runtime.ControllerOptions[*testapi.Gadget]{}))

		h.start()
		createGadget(t, ns, "g", testapi.GadgetSpec{})
		<-entered
		start := time.Now()
		require.NoError(t, h.stop())
		assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond)
	})
}
