package builtin_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/builtin"
	"github.com/opgen-sdk/opgen/pkg/runtime/builtin/internal/kindgen"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
	"github.com/opgen-sdk/opgen/test/testkit"
)

// printer is a pod printer: it records what it saw of each Pod.
type printer struct {
	mu   sync.Mutex
	seen []string // "verb name phase"
}

func (p *printer) print(_ context.Context, a *plug.Action[*corev1.Pod]) error {
	p.mu.Lock()
	p.seen = append(p.seen, string(a.Verb)+" "+a.Object.Name+" "+string(a.Object.Status.Phase))
	p.mu.Unlock()
	return nil
}

func (p *printer) saw(line string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.seen {
		if s == line {
			return true
		}
	}
	return false
}

// TestPodPrinter: a controller on Pods gets Add for a new Pod and, by the
// built-in default filter, Reconcile when the cluster changes its status.
func TestPodPrinter(t *testing.T) {
	t.Parallel()
	ns := podNamespace(t)
	op := newOperator(t, ns, nil)
	p := &printer{}
	require.NoError(t, testkit.Register(op, builtin.Pods(op, builtin.Options{}),
		plug.Handler[*corev1.Pod](plug.HandlerFuncs[*corev1.Pod]{OnAdd: p.print, OnModify: p.print, OnReconcile: p.print}),
		runtime.ControllerOptions[*corev1.Pod]{}))

	run(t, op)

	pod := createPod(t, ns, "web", nil)
	eventually(t, "Add web Pending", func() bool { return p.saw("Add web Pending") })
	pod.Status.Phase = corev1.PodRunning
	_, err := env.Clientset().CoreV1().Pods(ns).UpdateStatus(context.Background(), pod, metav1.UpdateOptions{})
	require.NoError(t, err)
	eventually(t, "Reconcile web Running", func() bool { return p.saw("Reconcile web Running") })
}

// monkey is a chaos monkey: it evicts every Pod its controller sees.
type monkey struct {
	op      *runtime.Operator
	evicted sync.Map // name → true
}

func (m *monkey) Add(ctx context.Context, a *plug.Action[*corev1.Pod]) error {
	err := m.op.Clientset().PolicyV1().Evictions(a.Object.Namespace).Evict(ctx, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: a.Object.Name, Namespace: a.Object.Namespace},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	m.evicted.Store(a.Object.Name, true)
	a.Normal("Evicted", "chaos monkey evicted %s", a.Object.Name)
	return nil
}
func (m *monkey) Modify(ctx context.Context, a *plug.Action[*corev1.Pod]) error    { return m.Add(ctx, a) }
func (m *monkey) Reconcile(ctx context.Context, a *plug.Action[*corev1.Pod]) error { return nil }

// TestChaosMonkey: a controller that watches only the Pods labelled for
// chaos evicts them and never sees the others.
func TestChaosMonkey(t *testing.T) {
	t.Parallel()
	ns := podNamespace(t)
	op := newOperator(t, ns, nil)
	m := &monkey{op: op}
	require.NoError(t, testkit.Register(op, builtin.Pods(op, builtin.Options{LabelSelector: "chaos=enabled"}),
		plug.Handler[*corev1.Pod](m), runtime.ControllerOptions[*corev1.Pod]{Name: "chaos-monkey"}))

	run(t, op)

	createPod(t, ns, "spared", nil)
	createPod(t, ns, "victim", map[string]string{"chaos": "enabled"})
	eventually(t, "the victim to be evicted", func() bool {
		_, err := env.Clientset().CoreV1().Pods(ns).Get(context.Background(), "victim", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	_, err := env.Clientset().CoreV1().Pods(ns).Get(context.Background(), "spared", metav1.GetOptions{})
	require.NoError(t, err)
	_, sawSpared := m.evicted.Load("spared")
	assert.False(t, sawSpared, "the label selector keeps unlabelled Pods out of the cache")
}

// expiringWatches fails the next watch request with 410 Gone once armed,
// after closing the watches in flight, as an API server that compacted
// away the resource version does.
type expiringWatches struct {
	armed atomic.Bool
	mu    sync.Mutex
	open  []*http.Response
}

func (e *expiringWatches) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.URL.Query().Get("watch") != "true" {
			return rt.RoundTrip(r)
		}
		if e.armed.CompareAndSwap(true, false) {
			return gone(r), nil
		}
		resp, err := rt.RoundTrip(r)
		if err == nil {
			e.mu.Lock()
			e.open = append(e.open, resp)
			e.mu.Unlock()
		}
		return resp, err
	})
}

// expire arms the 410 and ends the open watches, so the next watch gets it.
func (e *expiringWatches) expire() {
	e.armed.Store(true)
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.open {
		_ = r.Body.Close()
	}
	e.open = nil
}

func gone(r *http.Request) *http.Response {
	body := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version","reason":"Expired","code":410}`
	return &http.Response{StatusCode: http.StatusGone, Status: "410 Gone", Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: ioNopCloser(body), ContentLength: int64(len(body))}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func ioNopCloser(s string) *nopCloser { return &nopCloser{strings.NewReader(s)} }

type nopCloser struct{ *strings.Reader }

func (nopCloser) Close() error { return nil }

// TestWatchFailedAndRelisted: when the resource version of a watch
// expires, the subscriber sees WatchFailed, then WatchRelisted; changes
// made meanwhile still reach the handler.
func TestWatchFailedAndRelisted(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	cfg := rest.CopyConfig(env.Config)
	exp := &expiringWatches{}
	cfg.Wrap(exp.wrap)
	op := newOperator(t, ns, cfg)
	var failed, relisted atomic.Int32
	telemetry.On(op.Telemetry(), func(telemetry.WatchFailed) { failed.Add(1) })
	telemetry.On(op.Telemetry(), func(e telemetry.WatchRelisted) {
		if failed.Load() > 0 {
			relisted.Add(1)
		}
	})
	p := &printer{}
	require.NoError(t, testkit.Register(op, builtin.ConfigMaps(op, builtin.Options{}),
		plug.Handler[*corev1.ConfigMap](plug.HandlerFuncs[*corev1.ConfigMap]{OnAdd: func(_ context.Context, a *plug.Action[*corev1.ConfigMap]) error {
			p.mu.Lock()
			p.seen = append(p.seen, "Add "+a.Object.Name+" ")
			p.mu.Unlock()
			return nil
		}}), runtime.ControllerOptions[*corev1.ConfigMap]{}))

	run(t, op)

	exp.expire()
	eventually(t, "WatchFailed then WatchRelisted", func() bool { return failed.Load() > 0 && relisted.Load() > 0 })
	_, err := env.Clientset().CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	eventually(t, "Add after the relist", func() bool { return p.saw("Add after ") })
}

// TestGeneratedKindsAreFresh: zz_generated.kinds.go is what the table in
// internal/kindgen renders (`go generate` rewrites it).
func TestGeneratedKindsAreFresh(t *testing.T) {
	want, err := kindgen.Render()
	require.NoError(t, err)
	got, err := os.ReadFile("zz_generated.kinds.go")
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "zz_generated.kinds.go is stale: run go generate ./pkg/runtime/builtin")
}
