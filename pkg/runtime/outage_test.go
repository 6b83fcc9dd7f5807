package runtime_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/internal/testkit"
	"github.com/opgen-sdk/opgen/internal/testkit/testapi"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// proxy forwards TCP connections to the test API server until cut, which
// closes every connection and refuses new ones: an outage as the operator
// sees it.
type proxy struct {
	l      net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{l: l, target: target}
	t.Cleanup(func() { _ = l.Close(); p.cut() })
	go p.serve()
	return p
}

func (p *proxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
		go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
	}
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

func (p *proxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// config returns the admin config, through p.
func (p *proxy) config(t *testing.T) *rest.Config {
	u, err := url.Parse(env.Config.Host)
	require.NoError(t, err)
	require.Equal(t, p.target, u.Host)
	cfg := rest.CopyConfig(env.Config)
	cfg.Host = "https://" + p.l.Addr().String()
	cfg.Timeout = 5 * time.Second
	return cfg
}

func apiHost(t *testing.T) string {
	u, err := url.Parse(env.Config.Host)
	require.NoError(t, err)
	return u.Host
}

func readyz(t *testing.T, op *runtime.Operator) int {
	resp, err := http.Get("http://" + op.HealthAddr() + "/readyz")
	require.NoError(t, err)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestReadyzFollowsTheAPIServer: /readyz is 200 once the caches synced and
// the API server answers, 503 during an outage, 200 again after it.
func TestReadyzFollowsTheAPIServer(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	p := newProxy(t, apiHost(t))
	h := newOperator(t, ns, p.config(t), runtime.Options{HealthAddr: "127.0.0.1:0"})
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}}), runtime.ControllerOptions[*testapi.Gadget]{}))
	h.start()
	eventually(t, "/readyz 200", func() bool { return readyz(t, h.op) == http.StatusOK })
	p.cut()
	eventually(t, "/readyz 503 during the outage", func() bool { return readyz(t, h.op) == http.StatusServiceUnavailable })
	p.restore()
	eventually(t, "/readyz 200 after the outage", func() bool { return readyz(t, h.op) == http.StatusOK })
}

// TestNeverReadyWhenNeverSynced: an operator stopped before its caches
// synced (the API server was never reachable) never says it is ready.
func TestNeverReadyWhenNeverSynced(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	p := newProxy(t, apiHost(t))
	cfg := p.config(t)
	h := newOperator(t, ns, cfg, runtime.Options{HealthAddr: "127.0.0.1:0"})
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}}), runtime.ControllerOptions[*testapi.Gadget]{}))
	p.cut()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.op.Run(ctx) }()
	eventually(t, "the health server", func() bool { return h.op.HealthAddr() != "" })
	if resp, err := http.Get("http://" + h.op.HealthAddr() + "/readyz"); err == nil { // else Run already gave up
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Logf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of cancel")
	}
	assert.False(t, h.op.Ready(), "never synced, yet ready on shutdown")
}
