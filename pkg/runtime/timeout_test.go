package runtime_test

import (
	"context"
	"strings"
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
// its context cancelled, with a cause that names the timeout, is counted
// and retried; a handler that ignores its context is reported once as
// stuck, counted in opgen_reconcile_stuck and, with
// StuckHandlersFailReady, fails readiness until it returns.
func TestActionTimeout(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	var (
		mu      sync.Mutex
		timeout []telemetry.ReconcileTimedOut
		causes  []error
		release = make(chan struct{})
	)
	fn := func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
		if a.Object.Name == "ignores" {
			<-release // past the deadline and its grace
			return nil
		}
		<-ctx.Done()
		mu.Lock()
		causes = append(causes, context.Cause(ctx))
		mu.Unlock()
		return ctx.Err()
	}
	h := newOperator(t, ns, nil, runtime.Options{StuckHandlersFailReady: true})
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
	eventually(t, "readiness failing on the stuck handler", func() bool {
		err := h.op.CheckReady(context.Background())
		return err != nil && strings.Contains(err.Error(), "1 handler(s) stuck past their action timeout, their context cancelled: gadget "+ns+"/ignores for ")
	})
	assert.Equal(t, 1.0, metric(t, h.op, "opgen_reconcile_stuck", "controller", "gadget"))
	close(release)
	eventually(t, "ready once the stuck handler returned", func() bool { return h.op.CheckReady(context.Background()) == nil })
	assert.Equal(t, 0.0, metric(t, h.op, "opgen_reconcile_stuck", "controller", "gadget"))
	mu.Lock()
	assert.ErrorIs(t, causes[0], context.DeadlineExceeded)
	assert.ErrorContains(t, causes[0], "runtime: controller gadget: the Add of "+ns+"/waits ran past its ActionTimeout of 100ms")
	for _, e := range timeout {
		assert.False(t, e.Stuck && e.Key.Name == "waits", "a handler that returns at the deadline is not stuck")
	}
	mu.Unlock()
	assert.GreaterOrEqual(t, metric(t, h.op, "opgen_reconcile_timeouts_total", "controller", "gadget"), 2.0)
}
