package runtime_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestPeriodicRequeuesAreNotRetries: opgen_workqueue_retries_total counts
// requeues after errors only, not the periodic reconciles of a healthy
// object.
func TestPeriodicRequeuesAreNotRetries(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c}),
		runtime.ControllerOptions[*testapi.Gadget]{ReconcileEvery: 50 * time.Millisecond}))
	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{})
	eventually(t, "three periodic Reconciles", func() bool { return count(c.verbs("g"), plug.Reconcile) >= 3 })
	assert.Zero(t, metric(t, h.op, "opgen_workqueue_retries_total", "name", "gadget"))
}
