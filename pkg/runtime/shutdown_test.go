package runtime_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
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
		require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}, fn: func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
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
		require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}, fn: func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
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

// logBuffer collects a logger's lines for a test.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *logBuffer) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		b.mu.Lock()
		b.lines = append(b.lines, prefix+" "+args)
		b.mu.Unlock()
	}, funcr.Options{Verbosity: 1})
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// TestShutdownWithStuckHandler: a handler that ignores its cancelled
// context does not keep Run from returning after ShutdownTimeout; the
// shutdown names it by key and stops renewing the lease, which it does
// not release since the handler may still write.
func TestShutdownWithStuckHandler(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	logs := &logBuffer{}
	le := fastElection
	le.Identity = "stuck"
	h := newOperator(t, ns, nil, runtime.Options{ShutdownTimeout: 200 * time.Millisecond, LeaderElection: le, Logger: logs.logger()})
	entered, release := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(release) })
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}, fn: func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
		close(entered)
		<-release // ignores ctx
		return nil
	}}), runtime.ControllerOptions[*testapi.Gadget]{}))
	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{})
	<-entered
	h.cancel()
	h.cancel = nil
	select {
	case err := <-h.done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of cancel while a handler ignored its context")
	}
	assert.Contains(t, logs.String(), ns+"/g", "the stuck handler is named by key")

	leases := env.Clientset().CoordinationV1().Leases(ns)
	first, err := leases.Get(context.Background(), "test-operator", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "stuck", ptr.Deref(first.Spec.HolderIdentity, ""), "the lease is not released while work is left behind")
	time.Sleep(3 * le.RetryPeriod) // a renewing leader would renew in this time
	later, err := leases.Get(context.Background(), "test-operator", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, first.ResourceVersion, later.ResourceVersion, "the lease is still renewed after Run returned")
}
