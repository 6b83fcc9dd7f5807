package runtime_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestRESTClientMetrics: client-go's requests are counted in the
// operator's registry, by method, code and host, with their latency. The
// series are process-wide, so this operator talks to the API server by
// another name (localhost, which its certificate also names) to have a
// host label of its own.
func TestRESTClientMetrics(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	cfg := rest.CopyConfig(env.Config)
	u, err := url.Parse(cfg.Host)
	require.NoError(t, err)
	u.Host = strings.Replace(u.Host, "127.0.0.1", "localhost", 1)
	require.Contains(t, u.Host, "localhost", "the test API server listens on 127.0.0.1")
	cfg.Host = u.String()
	host := u.Host

	h := newOperator(t, ns, cfg, runtime.Options{})
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c}), runtime.ControllerOptions[*testapi.Gadget]{}))
	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{})
	eventually(t, "the status write", func() bool {
		g, err := getGadget(t, ns, "g")
		return err == nil && g.Status.ObservedGeneration == 1
	})

	requests := func(method string) float64 {
		return metric(t, h.op, "rest_client_requests_total", "host", host, "method", method, "code", "200")
	}
	// client-go observes a request's latency after the server answered,
	// which the status read above may see first.
	eventually(t, "the status apply's latency", func() bool {
		return metric(t, h.op, "rest_client_request_duration_seconds", "host", host, "verb", "PATCH") > 0
	})
	assert.Positive(t, requests("GET"), "the lists and watches")
	assert.Positive(t, requests("PATCH"), "the status apply")
	assert.Positive(t, metric(t, h.op, "rest_client_request_duration_seconds", "host", host, "verb", "GET"), "GET latencies")
	assert.Positive(t, metric(t, h.op, "rest_client_request_duration_seconds", "host", host, "verb", "PATCH"), "PATCH latencies")
	assert.Positive(t, metric(t, h.op, "rest_client_rate_limiter_duration_seconds", "host", host, "verb", "PATCH"), "rate limiter waits")
	assert.Zero(t, metric(t, h.op, "rest_client_requests_total", "host", host, "method", "DELETE"), "nothing was deleted")

	// A second operator's registry serves the same process-wide series.
	other := newOperator(t, ns, cfg, runtime.Options{Name: "other"})
	assert.Equal(t, requests("PATCH"), metric(t, other.op, "rest_client_requests_total", "host", host, "method", "PATCH", "code", "200"))
}
