package runtime_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestActionTimeout: an action past ControllerOptions.ActionTimeout has
// its context cancelled, is counted and retried; a handler that ignores
// its context is reported once as stuck.
func TestActionTimeout(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	var (
		mu      sync.Mutex
		timeout []telemetry.ReconcileTimedOut
		causes  []error
	)
	fn := func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
		if a.Object.Name == "ignores" {
			time.Sleep(time.Second + 300*time.Millisecond) // past the deadline and its grace
			return nil
		}
		<-ctx.Done()
		mu.Lock()
		causes = append(causes, ctx.Err())
		mu.Unlock()
		return ctx.Err()
	}
	h := newOperator(t, ns, nil, runtime.Options{})
	telemetry.On(h.op.Telemetry(), func(e telemetry.ReconcileTimedOut) {
		mu.Lock()
		timeout = append(timeout, e)
		mu.Unlock()
	})
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}, fn: fn}),
		runtime.ControllerOptions[*testapi.Gadget]{ActionTimeout: 100 * time.Millisecond, Workers: 2}))
	h.start()
	createGadget(t, ns, "waits", testapi.GadgetSpec{})
	createGadget(t, ns, "ignores", testapi.GadgetSpec{})
	eventually(t, "a retry of the action that timed out", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(causes) >= 2
	})
	eventually(t, "the stuck handler reported", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range timeout {
			if e.Stuck && e.Key.Name == "ignores" {
				return true
			}
		}
		return false
	})
	mu.Lock()
	assert.ErrorIs(t, causes[0], context.DeadlineExceeded)
	for _, e := range timeout {
		assert.False(t, e.Stuck && e.Key.Name == "waits", "a handler that returns at the deadline is not stuck")
	}
	mu.Unlock()
	assert.GreaterOrEqual(t, metric(t, h.op, "opgen_reconcile_timeouts_total", "controller", "gadget"), 2.0)
}
