package fleet_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/fleet"
	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// measuring runs the measurements of this file only when asked:
//
//	FLEET_MEASURE=1 go test ./pkg/runtime/fleet -run TestMeasure -v -timeout 30m
func measuring(t *testing.T) {
	if os.Getenv("FLEET_MEASURE") == "" {
		t.Skip("a measurement, not a check: set FLEET_MEASURE=1 to run it")
	}
}

// heap is the live heap after a collection.
func heap() uint64 {
	goruntime.GC()
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestMeasureEngage: the memory an engaged cluster costs, empty and with
// 1,000 objects, and the time from its Secret to its caches synced (and,
// with objects, to every object handled).
func TestMeasureEngage(t *testing.T) {
	measuring(t)
	ns := home.Namespace(t)
	memberNamespace(t, ns)
	const objects = 1000
	west := gadgets(t, members["west"])
	for i := range objects {
		_, err := west.Gadgets(ns).Create(context.Background(), &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("g-%04d", i)}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	var handled sync.Map
	var count int64
	var mu sync.Mutex
	setupCounting := func(op *runtime.Operator) error {
		kind, err := testapi.KindFor(op)
		if err != nil {
			return err
		}
		h := plug.HandlerFuncs[*testapi.Gadget]{OnReconcile: func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
			if _, dup := handled.LoadOrStore(a.Cluster+"/"+a.Object.Name, true); !dup {
				mu.Lock()
				count++
				mu.Unlock()
			}
			a.Object.Status.Phase = "handled in " + a.Cluster
			return nil
		}}
		return testkit.Register(op, kind, plug.Handler[*testapi.Gadget](h), runtime.ControllerOptions[*testapi.Gadget]{})
	}
	opts := runtime.Options{Name: "measure", Namespaces: []string{ns}, LeaderElection: election(ns, "solo"),
		MetricsAddr: "0", HealthAddr: "0", Logger: logr.Discard(), KubeAPIQPS: -1}
	f, err := fleet.New(home.Config, fleet.Options{Options: opts, Clusters: fleet.Secrets{Namespace: ns}}, setupCounting)
	require.NoError(t, err)
	startFleet(t, f)
	testkit.Eventually(t, "the fleet leads", func() bool { return f.Home().Leading() })
	base := heap()
	engage := func(name string, want int64) (time.Duration, time.Duration, uint64) {
		start := time.Now()
		clusterSecret(t, ns, name, members[name])
		testkit.Eventually(t, name+"'s caches synced", func() bool { op := f.Cluster(name); return op != nil && op.Ready() })
		synced := time.Since(start)
		testkit.Eventually(t, fmt.Sprintf("%d objects handled", want), func() bool { mu.Lock(); defer mu.Unlock(); return count >= want })
		return synced, time.Since(start), heap()
	}
	eastSynced, _, withEast := engage("east", 0)
	westSynced, westHandled, withWest := engage("west", objects)
	t.Logf("heap: %.1f MiB with no cluster engaged", float64(base)/(1<<20))
	t.Logf("an empty cluster: %.1f MiB more; its Secret to its caches synced in %v", float64(withEast-base)/(1<<20), eastSynced.Round(time.Millisecond))
	t.Logf("a cluster of %d objects: %.1f MiB more (%.0f B per object beyond an empty cluster); caches synced in %v, every object handled in %v",
		objects, float64(withWest-withEast)/(1<<20), float64(int64(withWest-withEast)-int64(withEast-base))/objects,
		westSynced.Round(time.Millisecond), westHandled.Round(time.Millisecond))
}

const (
	replicaEnv     = "FLEET_TEST_REPLICA" // identity; set in a replica
	replicaNSEnv   = "FLEET_TEST_NAMESPACE"
	replicaHomeEnv = "FLEET_TEST_HOME"
	replicaLogEnv  = "FLEET_TEST_LOG"
)

// runReplica runs one sharded replica of a fleet until SIGTERM: its
// handler writes a line to the shared log when it starts and ends handling
// a Gadget, takes 20ms, and asks to run again in 100ms.
func runReplica() int {
	id := os.Getenv(replicaEnv)
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "replica", id+":", err)
		return 1
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv(replicaHomeEnv))
	if err != nil {
		return fail(err)
	}
	logFile, err := os.OpenFile(os.Getenv(replicaLogEnv), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fail(err)
	}
	ns := os.Getenv(replicaNSEnv)
	setup := func(op *runtime.Operator) error {
		kind, err := testapi.KindFor(op)
		if err != nil {
			return err
		}
		h := plug.HandlerFuncs[*testapi.Gadget]{OnReconcile: func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
			key := a.Cluster + "/" + a.Object.Name
			_, _ = fmt.Fprintf(logFile, "start %s %s %d\n", key, id, time.Now().UnixNano())
			time.Sleep(20 * time.Millisecond)
			_, _ = fmt.Fprintf(logFile, "end %s %s %d\n", key, id, time.Now().UnixNano())
			a.RequeueAfter(100 * time.Millisecond)
			return nil
		}}
		return testkit.Register(op, kind, plug.Handler[*testapi.Gadget](h), runtime.ControllerOptions[*testapi.Gadget]{})
	}
	opts := runtime.Options{Name: "kill-test", Namespaces: []string{ns}, LeaderElection: election(ns, id), Sharding: true,
		MetricsAddr: "0", HealthAddr: "0", Logger: logr.Discard()}
	f, err := fleet.New(cfg, fleet.Options{Options: opts, Clusters: fleet.Secrets{Namespace: ns}}, setup)
	if err != nil {
		return fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := f.Run(ctx); err != nil {
		return fail(err)
	}
	return 0
}

// TestMeasureKill: two replicas share six clusters; one is killed with
// SIGKILL. Measured: when the survivor holds every cluster's Lease and
// handles every cluster's objects again; checked: no object was handled
// by both replicas at once.
func TestMeasureKill(t *testing.T) {
	measuring(t)
	ns := home.Namespace(t)
	clusters := map[string]*testenv.Environment{"east": members["east"], "west": members["west"]}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, name := range []string{"north", "south", "up", "down"} {
		e := testenv.New(testenv.Options{CRDDirs: []string{crds}, Private: true})
		wg.Go(func() {
			err := e.Start(context.Background())
			assert.NoError(t, err, "start the %s control plane", name)
			mu.Lock()
			clusters[name] = e
			mu.Unlock()
		})
		t.Cleanup(e.Stop)
	}
	wg.Wait()
	require.Len(t, clusters, 6)
	for name, e := range clusters {
		_, err := e.Clientset().CoreV1().Namespaces().Create(context.Background(), namespace(ns), metav1.CreateOptions{})
		require.NoError(t, err)
		for i := range 5 {
			_, err := gadgets(t, e).Gadgets(ns).Create(context.Background(), &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("g-%d", i)}}, metav1.CreateOptions{})
			require.NoError(t, err)
		}
		clusterSecret(t, ns, name, e)
	}
	log := t.TempDir() + "/journal"
	start := func(id string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), replicaEnv+"="+id, replicaNSEnv+"="+ns, replicaHomeEnv+"="+home.Kubeconfig, replicaLogEnv+"="+log)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	a, _ := start("replica-a"), start("replica-b")
	holders := func() map[string]string {
		list, err := home.Clientset().CoordinationV1().Leases(ns).List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		out := map[string]string{}
		for _, l := range list.Items {
			if c, ok := strings.CutPrefix(l.Name, "kill-test-cluster-"); ok && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
				out[c] = *l.Spec.HolderIdentity
			}
		}
		return out
	}
	testkit.Eventually(t, "six clusters held, three by each replica", func() bool {
		h := holders()
		n := 0
		for _, id := range h {
			if id == "replica-a" {
				n++
			}
		}
		return len(h) == 6 && n == 3
	})
	time.Sleep(2 * time.Second) // handling in every cluster
	require.NoError(t, a.Process.Signal(syscall.SIGKILL))
	killed := time.Now()
	testkit.Eventually(t, "replica-b holds every cluster's Lease", func() bool {
		h := holders()
		return len(h) == 6 && !slices.Contains(mapsValues(h), "replica-a")
	})
	held := time.Since(killed)
	var caughtUp time.Duration
	testkit.Eventually(t, "replica-b handles every cluster's objects", func() bool {
		last := lastHandled(t, log, "replica-b")
		for name := range clusters {
			if last[name].Before(killed.Add(held)) {
				return false
			}
		}
		caughtUp = time.Since(killed)
		return true
	})
	time.Sleep(time.Second)
	overlaps := overlapping(t, log)
	t.Logf("replica-a killed: replica-b held all six clusters' Leases %v later (lease 3s), and handled objects in each %v later", held.Round(time.Millisecond), caughtUp.Round(time.Millisecond))
	t.Logf("handlings journaled: %d, overlapping across replicas: %d", countLines(t, log)/2, len(overlaps))
	assert.Empty(t, overlaps, "an object handled by two replicas at once")
}

func mapsValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

type interval struct {
	id         string
	start, end int64
}

// readJournal returns the handlings of the journal, by cluster/object.
func readJournal(t *testing.T, path string) map[string][]interval {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	open := map[string]int64{}
	out := map[string][]interval{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var what, key, id string
		var at int64
		if _, err := fmt.Sscan(sc.Text(), &what, &key, &id, &at); err != nil {
			continue
		}
		switch what {
		case "start":
			open[key+" "+id] = at
		case "end":
			out[key] = append(out[key], interval{id, open[key+" "+id], at})
		}
	}
	return out
}

func lastHandled(t *testing.T, path, id string) map[string]time.Time {
	out := map[string]time.Time{}
	for key, ivs := range readJournal(t, path) {
		cluster, _, _ := strings.Cut(key, "/")
		for _, iv := range ivs {
			if iv.id == id && time.Unix(0, iv.end).After(out[cluster]) {
				out[cluster] = time.Unix(0, iv.end)
			}
		}
	}
	return out
}

func overlapping(t *testing.T, path string) []string {
	var out []string
	for key, ivs := range readJournal(t, path) {
		for i, a := range ivs {
			for _, b := range ivs[i+1:] {
				if a.id != b.id && a.start < b.end && b.start < a.end {
					out = append(out, key+": "+a.id+" and "+b.id+" at "+strconv.FormatInt(max(a.start, b.start), 10))
				}
			}
		}
	}
	return out
}

func countLines(t *testing.T, path string) int {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Count(string(data), "\n")
}
