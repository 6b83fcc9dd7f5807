package fleet_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/fleet"
	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// election are short Lease timings, so that a handover takes seconds.
func election(ns, identity string) runtime.LeaderElectionOptions {
	return runtime.LeaderElectionOptions{Namespace: ns, Identity: identity,
		LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond}
}

// startFleet runs f until the test ends.
func startFleet(t *testing.T, f *fleet.Fleet) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err, "the fleet's Run")
		case <-time.After(60 * time.Second):
			t.Error("the fleet did not stop within 60s of its cancel")
		}
	}
	t.Cleanup(stop)
	return stop
}

// clusterSecret creates the Secret of a member cluster in the home
// cluster's namespace ns.
func clusterSecret(t *testing.T, ns, name string, e *testenv.Environment) {
	t.Helper()
	_, err := home.Clientset().CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-" + name, Labels: map[string]string{fleet.DefaultClusterLabel: name}},
		Data:       map[string][]byte{"kubeconfig": kubeconfig(t, e)},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
}

// createGadget creates Gadget name in ns of cluster e and returns when it
// was created.
func createGadget(t *testing.T, e *testenv.Environment, ns, name string) time.Time {
	t.Helper()
	_, err := gadgets(t, e).Gadgets(ns).Create(context.Background(), &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return time.Now()
}

// handledIn waits until Gadget name in cluster e's ns says it was handled
// in cluster, and returns how long after since.
func handledIn(t *testing.T, e *testenv.Environment, ns, name, cluster string, since time.Time) time.Duration {
	t.Helper()
	cs := gadgets(t, e)
	testkit.Eventually(t, fmt.Sprintf("Gadget %s handled in cluster %s", name, cluster), func() bool {
		g, err := cs.Gadgets(ns).Get(context.Background(), name, metav1.GetOptions{})
		return err == nil && g.Status.Phase == "handled in "+cluster
	})
	return time.Since(since)
}

func gadgets(t *testing.T, e *testenv.Environment) *testapi.Clientset {
	t.Helper()
	hc, err := rest.HTTPClientFor(e.Config)
	require.NoError(t, err)
	cs, err := testapi.NewForConfigAndClient(e.Config, hc)
	require.NoError(t, err)
	return cs
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// goroutines counts the goroutines once the short-lived ones ended.
func goroutines() int {
	goruntime.GC()
	time.Sleep(200 * time.Millisecond)
	return goruntime.NumGoroutine()
}

// TestFleet: one process works in three clusters. Clusters are engaged
// from Secrets while it runs; each cluster's objects are handled there
// and nowhere else; a cluster whose API server stops is reported, and the
// others are still handled at once; it is caught up when it comes back; a
// deleted Secret disengages its cluster, and its goroutines go.
func TestFleet(t *testing.T) {
	ns := home.Namespace(t)
	memberNamespace(t, ns)
	j := &journal{}
	logs := &lines{}
	opts := runtime.Options{Name: "fleet-test", Namespaces: []string{ns}, LeaderElection: election(ns, "solo"),
		MetricsAddr: "127.0.0.1:0", MetricsInsecure: true, HealthAddr: "127.0.0.1:0",
		Logger: funcr.New(func(prefix, args string) { logs.add(prefix + " " + args); t.Log(prefix, args) }, funcr.Options{})}
	f, err := fleet.New(home.Config, fleet.Options{Options: opts, Clusters: fleet.Secrets{Namespace: ns}, HomeCluster: "home"}, setup(j, "solo"))
	require.NoError(t, err)
	startFleet(t, f)
	synced := func(names ...string) func() bool {
		return func() bool {
			if !slices.Equal(f.Clusters(), names) {
				return false
			}
			for _, n := range names {
				if op := f.Cluster(n); op == nil || !op.Ready() {
					return false
				}
			}
			return true
		}
	}
	testkit.Eventually(t, "the home cluster engaged", synced("home"))
	east, west := members["east"], members["west"]
	_, err = east.Clientset().CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}) // the test's own connection, before the count
	require.NoError(t, err)
	before := goroutines()

	clusterSecret(t, ns, "east", east)
	testkit.Eventually(t, "east engaged from its Secret", synced("east", "home"))
	engaged := goroutines()
	handledIn(t, east, ns, "g-east", "east", createGadget(t, east, ns, "g-east"))
	handledIn(t, home, ns, "g-home", "home", createGadget(t, home, ns, "g-home"))
	assert.Equal(t, []string{"east/g-east", "home/g-home"}, slices.Sorted(maps.Keys(j.keys())), "each Gadget handled in its own cluster only")

	require.NoError(t, home.Clientset().CoreV1().Secrets(ns).Delete(context.Background(), "cluster-east", metav1.DeleteOptions{}))
	testkit.Eventually(t, "east disengaged once its Secret went", synced("home"))
	var after int
	testkit.Eventually(t, "the goroutines of east gone", func() bool {
		after = goroutines()
		return after <= before+2
	})
	t.Logf("goroutines: %d with the home cluster, %d with east too, %d once east was disengaged", before, engaged, after)

	clusterSecret(t, ns, "east", east)
	clusterSecret(t, ns, "west", west)
	testkit.Eventually(t, "east and west engaged", synced("east", "home", "west"))
	handledIn(t, west, ns, "g-west", "west", createGadget(t, west, ns, "g-west"))
	code, body := get(t, "http://"+f.Home().MetricsAddr()+"/metrics")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `opgen_fleet_cluster_ready{cluster="west"} 1`)
	assert.Regexp(t, `opgen_reconcile_total\{cluster="west",controller="gadget",verb="[A-Za-z]+"\} 1`, body, "the clusters' series carry their name")

	west.StopAPIServer()
	t.Log("stopped the API server of west")
	testkit.Eventually(t, "/readyz: west degraded, the fleet still ready", func() bool {
		code, body := get(t, "http://"+f.Home().HealthAddr()+"/readyz")
		return code == http.StatusOK && strings.Contains(body, "degraded") && strings.Contains(body, "west:")
	})
	_, body = get(t, "http://"+f.Home().MetricsAddr()+"/metrics")
	assert.Contains(t, body, `opgen_fleet_cluster_ready{cluster="west"} 0`)
	testkit.Eventually(t, "the outage of west logged, naming it", func() bool {
		return logs.has(`"cluster"="west"`, "the API server is unreachable")
	})
	took := handledIn(t, east, ns, "g-east-2", "east", createGadget(t, east, ns, "g-east-2"))
	t.Logf("with west down, a Gadget in east handled %v after its create", took.Round(time.Millisecond))
	// Measured 4–25 ms, whether or not west is down; a stall of the
	// fleet behind a down cluster (a shared worker on its timeouts, a
	// relist backoff) is a second or more.
	assert.Less(t, took, 500*time.Millisecond, "a cluster that is down does not slow the others")

	require.NoError(t, west.StartAPIServer(context.Background()))
	back := createGadget(t, west, ns, "g-west-2")
	took = handledIn(t, west, ns, "g-west-2", "west", back)
	t.Logf("west back: a Gadget created there handled %v later", took.Round(time.Millisecond))
	// Measured 1.2–1.7 s: the outage's check sees the server within a
	// second (outage.Check), then the relist and the action.
	assert.Less(t, took, 3*time.Second, "a cluster that comes back is caught up at once")
}

// lines keeps log lines for a test to read.
type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, s)
}

// has reports whether a line holds every part.
func (l *lines) has(parts ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.all {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(s, p)
		}
		if ok {
			return true
		}
	}
	return false
}
