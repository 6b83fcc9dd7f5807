package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/internal/partition"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// proxy forwards TCP connections to the test API server until cut: an
// outage as the operator sees it.
type proxy struct {
	*partition.Proxy
	target string
}

func newProxy(t *testing.T, target string) *proxy {
	pp, err := partition.New(target)
	require.NoError(t, err)
	t.Cleanup(pp.Close)
	return &proxy{Proxy: pp, target: target}
}

// refuse makes the API server unreachable, as when its process is down;
// listen brings it back on the same address.
func (p *proxy) refuse() { p.Refuse() }

func (p *proxy) listen(t *testing.T) { require.NoError(t, p.Listen()) }

// config returns the admin config, through p.
func (p *proxy) config(t *testing.T) *rest.Config {
	u, err := url.Parse(env.Config.Host)
	require.NoError(t, err)
	require.Equal(t, p.target, u.Host)
	cfg := rest.CopyConfig(env.Config)
	cfg.Host = "https://" + p.Addr()
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
	p.Cut()
	eventually(t, "/readyz 503 during the outage", func() bool { return readyz(t, h.op) == http.StatusServiceUnavailable })
	p.Restore()
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
	p.Cut()
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

// lines records the messages a logger wrote.
type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		l.all = append(l.all, prefix+" "+args)
		l.mu.Unlock()
	}, funcr.Options{LogTimestamp: true, Verbosity: 1})
}

// dumpOnFailure logs every line l recorded when t fails: what the
// operator did during and after the outage.
func (l *lines) dumpOnFailure(t *testing.T) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, s := range l.all {
			t.Log(s)
		}
	})
}

func (l *lines) count(part string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.all {
		if strings.Contains(s, part) {
			n++
		}
	}
	return n
}

// TestRecoversAtOnceAfterAnOutage: while the API server refuses
// connections the outage is logged and /readyz says 503; a change made the
// moment it is back is handled within a few seconds, and /readyz turns
// 200. Under make chaos it runs four times with a longer outage: leader
// election off once, and on (a lease longer than the outage) three times. (Through this proxy client-go happened to
// recover fast without the outage transport too; TestOutageRecovery in
// test/chaos, which stops kube-apiserver itself, shows the 20 s it
// took.)
func TestRecoversAtOnceAfterAnOutage(t *testing.T) {
	t.Parallel()
	outage := 16 * time.Second
	runs := []bool{false}
	if chaosFull() {
		outage, runs = 30*time.Second, []bool{false, true, true, true}
	}
	for i, election := range runs {
		t.Run(fmt.Sprintf("run%d-election=%v", i, election), func(t *testing.T) {
			ns := env.Namespace(t)
			p := newProxy(t, apiHost(t))
			log := &lines{}
			log.dumpOnFailure(t)
			opts := runtime.Options{HealthAddr: "127.0.0.1:0", Logger: log.logger()}
			opts.LeaderElection.Disabled = !election
			if election {
				// A leader that cannot renew within its deadline steps down
				// and Run ends (ErrLostLeadership), as it must; the lease
				// here outlasts the outage, so that what is measured is the
				// recovery of the watches, with the elector running.
				opts.LeaderElection.LeaseDuration = 2 * outage
				opts.LeaderElection.RenewDeadline = outage + 10*time.Second
			}
			h := newOperator(t, ns, p.config(t), opts)
			c := &calls{}
			require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c}), runtime.ControllerOptions[*testapi.Gadget]{}))
			h.start()
			if election {
				eventually(t, "leadership", h.op.Leading)
			}
			p.refuse()
			time.Sleep(outage) // the outage: what is measured is after it
			assert.Positive(t, log.count("the API server is unreachable"), "the outage is logged while it lasts")
			assert.Equal(t, http.StatusServiceUnavailable, readyz(t, h.op), "not ready during the outage")
			p.listen(t)
			back := time.Now()
			createGadget(t, ns, "after", testapi.GadgetSpec{})
			eventually(t, "the Gadget created after the outage handled", func() bool { return len(c.of("after")) > 0 })
			took := time.Since(back)
			t.Logf("outage of %v: a change made when the API server came back was handled %v later", outage, took.Round(time.Millisecond))
			assert.Less(t, took, 3*time.Second, "handled within 3s of the API server's return")
			eventually(t, "/readyz 200 after the outage", func() bool { return readyz(t, h.op) == http.StatusOK })
		})
	}
}
