package runtime_test

import (
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestStartsWithConventionalPortsTaken: an operator with default Options
// comes up, serving /metrics and /readyz, on ports the kernel chose, never
// on :8080 and :8081 (the ports operators conventionally use, and the
// generated manifest passes), so that whatever holds those on a developer's
// or CI's machine cannot stop it. The test does not hold them itself: on a
// shared machine that would break whoever needs them meanwhile. Before the
// defaults were free ports, the operator failed to start when they were
// taken.
func TestStartsWithConventionalPortsTaken(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	op, err := runtime.New(env.Config, runtime.Options{
		Name:           "ports-operator",
		Namespaces:     []string{ns},
		LeaderElection: runtime.LeaderElectionOptions{Namespace: ns},
		Logger:         testr.New(t),
	})
	require.NoError(t, err)
	kind, err := testapi.KindFor(op)
	require.NoError(t, err)
	require.NoError(t, testkit.Register(op, kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}}), runtime.ControllerOptions[*testapi.Gadget]{}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	eventually(t, "the operator to come up and be ready", op.Ready)
	resp, err := http.Get("http://" + op.HealthAddr() + "/readyz")
	require.NoError(t, err, "GET /readyz on %s", op.HealthAddr())
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "GET /readyz on %s", op.HealthAddr())
	// /metrics is HTTPS with authentication by default: that it listens is
	// what this test is about.
	c, err := net.Dial("tcp", op.MetricsAddr())
	require.NoError(t, err, "connect to /metrics on %s", op.MetricsAddr())
	_ = c.Close()
	for _, addr := range []string{op.HealthAddr(), op.MetricsAddr()} {
		_, port, err := net.SplitHostPort(addr)
		require.NoError(t, err, addr)
		require.NotContains(t, []string{"8080", "8081"}, port, "the default address %s is a conventional port another process may hold", addr)
	}
}
