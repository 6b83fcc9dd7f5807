package runtime_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"syscall"
	"testing"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/internal/testapi"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// TestStartsWithConventionalPortsTaken: an operator with default Options
// comes up, serving /metrics and /readyz, while :8080 and :8081 (the ports
// operators conventionally use, and the generated manifest passes) are
// held by another listener. The test holds them itself when they are
// free; when another process already holds them, that is the case under
// test. Before the defaults were free ports, the operator failed to start.
func TestStartsWithConventionalPortsTaken(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{":8080", ":8081"} {
		l, err := net.Listen("tcp", addr)
		switch {
		case err == nil:
			t.Cleanup(func() { _ = l.Close() })
		case errors.Is(err, syscall.EADDRINUSE):
			t.Logf("%s is already held by another process: the case under test", addr)
		default:
			require.NoError(t, err, "hold %s", addr)
		}
	}
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
	require.NoError(t, register(op, kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}}), runtime.ControllerOptions[*testapi.Gadget]{}))
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
}
