// Package compaction tests an operator through a partition during which
// etcd is compacted. It has its own control plane: its kube-apiserver runs
// without the watch cache, so that a watch resumed after the partition
// reaches etcd and gets 410 Gone, as it does on a real cluster once the
// watch cache's window has passed.
package compaction

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/internal/partition"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// Private: its kube-apiserver has its own flags, and the test compacts
// its etcd.
var env = testenv.New(testenv.Options{
	CRDDirs:        []string{"../../testkit/testapi/crd"},
	APIServerFlags: []string{"--watch-cache=false"},
	Private:        true,
})

func TestMain(m *testing.M) { env.Main(m) }

func full() bool { return os.Getenv("OPGEN_CHAOS") == "full" && !testing.Short() }

func newProxy(t *testing.T, target string) *partition.Proxy {
	p, err := partition.New(target)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// etcdURL is the client URL of the environment's etcd, read from its
// command line.
func etcdURL(t *testing.T) string {
	t.Helper()
	for _, pid := range env.PIDs() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		require.NoError(t, err)
		for _, arg := range strings.Split(string(b), "\x00") {
			if u, ok := strings.CutPrefix(arg, "--listen-client-urls="); ok {
				return strings.Split(u, ",")[0]
			}
		}
	}
	t.Fatal("no etcd process with --listen-client-urls among the environment's")
	return ""
}

// etcdCall posts a request to etcd's v3 JSON API (its gRPC gateway).
func etcdCall(t *testing.T, path string, req, resp any) {
	t.Helper()
	body, err := json.Marshal(req)
	require.NoError(t, err)
	r, err := http.Post(etcdURL(t)+path, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer r.Body.Close()
	out, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.StatusCode, "etcd %s: %s", path, out)
	require.NoError(t, json.Unmarshal(out, resp), "etcd %s: %s", path, out)
}

// compact compacts etcd at its current revision and returns it.
func compact(t *testing.T) string {
	t.Helper()
	var rng struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	etcdCall(t, "/v3/kv/range", map[string]any{"key": "Lw=="}, &rng) // "/"
	require.NotEmpty(t, rng.Header.Revision)
	var ignored map[string]any
	etcdCall(t, "/v3/kv/compaction", map[string]any{"revision": rng.Header.Revision, "physical": true}, &ignored)
	return rng.Header.Revision
}

// syncBuffer is a bytes.Buffer safe for the operator's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// journal records the actions a handler ran, by name.
type journal struct {
	mu  sync.Mutex
	log []string // "<verb> <name> <generation>"
}

func (j *journal) add(a *plug.Action[*testapi.Gadget]) error {
	j.mu.Lock()
	j.log = append(j.log, fmt.Sprintf("%s %s %d", a.Verb, a.Object.Name, a.Object.Generation))
	j.mu.Unlock()
	return nil
}

// has reports whether the handler ran verb for name (a deletion raises a
// custom resource's generation, so it is not compared).
func (j *journal) has(verb, name string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.ContainsFunc(j.log, func(e string) bool { return strings.HasPrefix(e, verb+" "+name+" ") })
}

type deleter struct{ j *journal }

func (d deleter) Reconcile(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
	return d.j.add(a)
}
func (d deleter) Delete(_ context.Context, a *plug.Action[*testapi.Gadget]) error { return d.j.add(a) }

func eventually(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, d, true,
		func(context.Context) (bool, error) { return cond(), nil })
	require.NoError(t, err, "waited %s in vain for %s", d, what)
}

// TestCompactionUnderPartition: the operator is cut from the API server;
// meanwhile a Gadget is created, one modified, one deleted (it waits on
// the finalizer), other writes move etcd on, and etcd is compacted at its
// latest revision. When the partition heals, the operator's watches get
// 410 Gone and list again, and it handles every change: nothing is lost,
// the deleted Gadget gets its Delete and goes.
func TestCompactionUnderPartition(t *testing.T) {
	rounds := 1
	if full() {
		rounds = 5
	}
	ns := env.Namespace(t)
	hostURL, err := http.NewRequest(http.MethodGet, env.Config.Host, nil)
	require.NoError(t, err)
	p := newProxy(t, hostURL.URL.Host)
	cfg := rest.CopyConfig(env.Config)
	cfg.Host = "https://" + p.Addr()
	cfg.Timeout = 5 * time.Second
	logs := &syncBuffer{}
	op, err := runtime.New(cfg, runtime.Options{Name: "compaction-operator", Namespaces: []string{ns},
		MetricsAddr: "0", HealthAddr: "0", LeaderElection: runtime.LeaderElectionOptions{Disabled: true},
		Logger: logr.FromSlogHandler(slog.NewTextHandler(logs, nil))})
	require.NoError(t, err)
	kind, err := testapi.KindFor(op)
	require.NoError(t, err)
	j := &journal{}
	_, err = runtime.Register(op, kind, plug.Handler[*testapi.Gadget](deleter{j}), runtime.ControllerOptions[*testapi.Gadget]{})
	require.NoError(t, err)
	// When a watch expires, the operator is not ready until its cache
	// listed again: asked at that moment, readiness names the relist. It
	// once said 200 before the relist forced by the 410 had finished.
	var relistReported, readyWhileRelisting atomic.Int32
	telemetry.On(op.Telemetry(), func(e telemetry.WatchFailed) {
		if !apierrors.IsResourceExpired(e.Err) && !apierrors.IsGone(e.Err) {
			return
		}
		if err := op.CheckReady(context.Background()); err != nil && strings.Contains(err.Error(), "list again") {
			relistReported.Add(1)
		} else {
			readyWhileRelisting.Add(1)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
		if t.Failed() {
			t.Logf("operator log:\n%s", logs.String())
		}
	}()
	eventually(t, "the caches to sync", time.Minute, op.Ready)
	hc, err := rest.HTTPClientFor(env.Config)
	require.NoError(t, err)
	cs, err := testapi.NewForConfigAndClient(env.Config, hc)
	require.NoError(t, err)
	gadgets := cs.Gadgets(ns)
	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "noise"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	var figures []string
	for r := range rounds {
		keep, del, fresh := fmt.Sprintf("keep-%d", r), fmt.Sprintf("del-%d", r), fmt.Sprintf("new-%d", r)
		for _, n := range []string{keep, del} {
			_, err := gadgets.Create(ctx, &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
			require.NoError(t, err)
		}
		observed := func(name string, generation int64) bool {
			g, err := gadgets.Get(ctx, name, metav1.GetOptions{})
			return err == nil && g.Status.ObservedGeneration == generation
		}
		eventually(t, fmt.Sprintf("round %d: both Gadgets handled", r), 30*time.Second, func() bool {
			return observed(keep, 1) && observed(del, 1)
		})
		expiredBefore := strings.Count(logs.String(), "watch expired; listing again")
		p.Cut()
		cutAt := time.Now()
		_, err := gadgets.Create(ctx, &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: fresh}}, metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = gadgets.Patch(ctx, keep, types.MergePatchType, []byte(`{"spec":{"message":"changed while cut"}}`), metav1.PatchOptions{})
		require.NoError(t, err)
		require.NoError(t, gadgets.Delete(ctx, del, metav1.DeleteOptions{}))
		for i := range 50 {
			_, err := cms.Patch(ctx, "noise", types.MergePatchType, []byte(fmt.Sprintf(`{"data":{"i":"%d"}}`, i)), metav1.PatchOptions{})
			require.NoError(t, err)
		}
		rev := compact(t)
		time.Sleep(2 * time.Second) // the partition lasts a while after the compaction
		p.Restore()
		outage := time.Since(cutAt)
		healed := time.Now()
		defer func() {
			if t.Failed() {
				_, err := gadgets.Get(ctx, del, metav1.GetOptions{})
				t.Logf("new observed: %v, keep observed 2: %v, del gone: %v, journal: %v", observed(fresh, 1), observed(keep, 2), apierrors.IsNotFound(err), j.log)
			}
		}()
		eventually(t, fmt.Sprintf("round %d: the changes made during the partition handled", r), time.Minute, func() bool {
			_, err := gadgets.Get(ctx, del, metav1.GetOptions{})
			return observed(fresh, 1) && observed(keep, 2) && j.has("Delete", del) && apierrors.IsNotFound(err)
		})
		caughtUp := time.Since(healed)
		expired := strings.Count(logs.String(), "watch expired; listing again") - expiredBefore
		require.Positive(t, expired, "round %d: no watch got 410 Gone: the test did not test a relist", r)
		require.Zero(t, readyWhileRelisting.Load(), "round %d: ready while a cache listed again after its watch expired", r)
		require.Positive(t, relistReported.Load(), "round %d: readiness did not name the relist", r)
		eventually(t, fmt.Sprintf("round %d: ready once the caches listed again", r), 30*time.Second, func() bool { return op.CheckReady(ctx) == nil })
		figures = append(figures, fmt.Sprintf("round %d: partition %s, etcd compacted at revision %s, %d watches relisted, all 3 changes handled %s after it healed",
			r, outage.Round(10*time.Millisecond), rev, expired, caughtUp.Round(10*time.Millisecond)))
	}
	t.Logf("figures:\n%s", strings.Join(figures, "\n"))
}
