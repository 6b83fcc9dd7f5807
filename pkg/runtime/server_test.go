package runtime_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// TestMetricsAndHealth: /healthz, /readyz and plain /metrics (asked for
// with MetricsInsecure) answer, and the metrics show reconciles, the queue
// and leadership.
func TestMetricsAndHealth(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{MetricsAddr: "127.0.0.1:0", HealthAddr: "127.0.0.1:0", MetricsInsecure: true})
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c}), runtime.ControllerOptions[*testapi.Gadget]{}))
	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{})
	eventually(t, "Add", func() bool { return len(c.of("g")) > 0 })
	eventually(t, "leadership", h.op.Leading)

	code, _ := get(t, "http://"+h.op.HealthAddr()+"/healthz")
	assert.Equal(t, http.StatusOK, code)
	code, _ = get(t, "http://"+h.op.HealthAddr()+"/readyz")
	assert.Equal(t, http.StatusOK, code)
	eventually(t, "the reconcile metrics", func() bool {
		_, body := get(t, "http://"+h.op.MetricsAddr()+"/metrics")
		return containsAll(body,
			`opgen_reconcile_total{controller="gadget",verb="Add"} 1`,
			`opgen_reconcile_duration_seconds_count{controller="gadget",verb="Add"} 1`,
			`opgen_workqueue_adds_total{name="gadget"}`,
			`opgen_workqueue_depth{name="gadget"}`,
			`opgen_workqueue_queue_duration_seconds_bucket{name="gadget"`,
			`opgen_api_writes_total{controller="gadget",what="status"} 1`,
			"opgen_leader 1",
			"go_goroutines",
		)
	})
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
