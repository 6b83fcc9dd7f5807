package runtime_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// Private: the chaos tests stop and restart the servers.
var env = testenv.New(testenv.Options{CRDDirs: []string{"../../test/testkit/testapi/crd"}, Private: true})

func TestMain(m *testing.M) {
	if os.Getenv(shardReplicaEnv) != "" {
		os.Exit(runShardReplica()) // a replica of a sharding test
	}
	env.Main(m)
}

// writes counts the API writes a client makes, by method and path.
type writes struct {
	mu    sync.Mutex
	calls []string
}

func (w *writes) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.Method != http.MethodGet && !strings.Contains(r.URL.Path, "/events") && !strings.Contains(r.URL.Path, "/leases") {
			w.mu.Lock()
			w.calls = append(w.calls, r.Method+" "+r.URL.Path)
			w.mu.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

// count returns the writes whose "METHOD path" contains every part.
func (w *writes) count(parts ...string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
next:
	for _, c := range w.calls {
		for _, p := range parts {
			if !strings.Contains(c, p) {
				continue next
			}
		}
		n++
	}
	return n
}

func (w *writes) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.calls...)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// harness runs one operator for a test.
type harness struct {
	t      *testing.T
	ns     string
	op     *runtime.Operator
	writes *writes
	kind   runtime.Kind[*testapi.Gadget]
	cancel context.CancelFunc
	done   chan error
}

// newOperator makes an operator for ns with leader election off, servers
// disabled and a test logger, unless opts says otherwise.
func newOperator(t *testing.T, ns string, cfg *rest.Config, opts runtime.Options) *harness {
	t.Helper()
	if cfg == nil {
		cfg = rest.CopyConfig(env.Config)
	}
	w := &writes{}
	cfg.Wrap(w.wrap)
	if opts.Name == "" {
		opts.Name = "test-operator"
	}
	if opts.Namespaces == nil {
		opts.Namespaces = []string{ns}
	}
	if opts.LeaderElection.Namespace == "" {
		opts.LeaderElection.Namespace = ns
	}
	if opts.MetricsAddr == "" {
		opts.MetricsAddr = "0"
	}
	if opts.HealthAddr == "" {
		opts.HealthAddr = "0"
	}
	if opts.Logger.IsZero() {
		opts.Logger = testr.NewWithOptions(t, testr.Options{Verbosity: 0})
	}
	op, err := runtime.New(cfg, opts)
	require.NoError(t, err)
	kind, err := testapi.KindFor(op)
	require.NoError(t, err)
	return &harness{t: t, ns: ns, op: op, writes: w, kind: kind}
}

// start runs the operator until the test ends or stop is called, and waits
// for its caches to sync.
func (h *harness) start() {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- h.op.Run(ctx) }()
	h.t.Cleanup(func() { _ = h.stop() })
	eventually(h.t, "the caches to sync", func() bool { return h.op.Ready() })
}

// stop cancels Run and returns its error.
func (h *harness) stop() error {
	if h.cancel == nil {
		return nil
	}
	h.cancel()
	h.cancel = nil
	select {
	case err := <-h.done:
		return err
	case <-time.After(60 * time.Second):
		return errors.New("Run did not return within 60s of cancel")
	}
}

// eventually polls cond every 20ms for up to 30s.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, what, cond)
}

// calls records the actions a handler ran.
type calls struct {
	mu   sync.Mutex
	list []call
	n    atomic.Int64
}

type call struct {
	verb       plug.Verb
	name       string
	generation int64
	finalizers []string
}

func (c *calls) add(a *plug.Action[*testapi.Gadget]) {
	c.mu.Lock()
	c.list = append(c.list, call{a.Verb, a.Object.Name, a.Object.Generation, a.Object.GetFinalizers()})
	c.mu.Unlock()
	c.n.Add(1)
}

func (c *calls) of(name string) []call {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []call
	for _, x := range c.list {
		if x.name == name {
			out = append(out, x)
		}
	}
	return out
}

func (c *calls) verbs(name string) []plug.Verb {
	var out []plug.Verb
	for _, x := range c.of(name) {
		out = append(out, x.verb)
	}
	return out
}

func (c *calls) last(name string) (call, bool) {
	l := c.of(name)
	if len(l) == 0 {
		return call{}, false
	}
	return l[len(l)-1], true
}

// handler is a test handler that records every action and runs an
// optional function per verb.
type handler struct {
	calls *calls
	fn    func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error
}

func (h *handler) run(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
	h.calls.add(a)
	if h.fn != nil {
		return h.fn(ctx, a)
	}
	return nil
}

// Reconcile is handler's only method: it runs for Add, Modify and
// Reconcile, and calls records a.Verb, so every test of the verbs checks
// that a Reconcile-only handler gets each of them.
func (h *handler) Reconcile(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
	return h.run(ctx, a)
}

// deleter is a handler that also implements plug.Deleter.
type deleter struct{ handler }

func (d *deleter) Delete(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
	return d.run(ctx, a)
}

func gadgetClient(t testing.TB, ns string) testapi.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	hc, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	c, err := testapi.NewForConfigAndClient(cfg, hc)
	require.NoError(t, err)
	return c.Gadgets(ns)
}

func createGadget(t testing.TB, ns, name string, spec testapi.GadgetSpec) *testapi.Gadget {
	t.Helper()
	g, err := gadgetClient(t, ns).Create(context.Background(), &testapi.Gadget{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec,
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return g
}

func getGadget(t testing.TB, ns, name string) (*testapi.Gadget, error) {
	return gadgetClient(t, ns).Get(context.Background(), name, metav1.GetOptions{})
}

// metric reads one sample of the operator's registry.
func metric(t testing.TB, op *runtime.Operator, name string, labels ...string) float64 {
	t.Helper()
	return testkit.Metric(t, op, name, labels...)
}
