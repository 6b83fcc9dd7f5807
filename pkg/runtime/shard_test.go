package runtime_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/opgen-sdk/opgen/internal/testkit/testapi"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/builtin"
)

// A sharded replica of the tests runs as a process of the test binary
// (TestMain), so that a test can kill it for real.
const (
	shardReplicaEnv = "OPGEN_TEST_SHARD_REPLICA" // identity; set in a replica
	shardConfigEnv  = "OPGEN_TEST_SHARD_KUBECONFIG"
	shardNSEnv      = "OPGEN_TEST_SHARD_NAMESPACE"
	shardLogEnv     = "OPGEN_TEST_SHARD_LOG"
)

// Lease timings of the sharding tests: short, so that a crash is
// recovered from in seconds.
var shardElection = runtime.LeaderElectionOptions{LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond}

// runShardReplica runs one sharded replica until SIGTERM: a controller of
// Gadgets whose handler writes a line to the shared log when it starts and
// when it ends handling an object, takes 150ms, declares one ConfigMap, and
// asks to be reconciled again in 50ms.
func runShardReplica() int {
	id := os.Getenv(shardReplicaEnv)
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "replica", id+":", err)
		return 1
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv(shardConfigEnv))
	if err != nil {
		return fail(err)
	}
	logFile, err := os.OpenFile(os.Getenv(shardLogEnv), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fail(err)
	}
	// SIGTERM is caught from here on, and the test waits for the line
	// that says so before it may stop the replica.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	_, _ = fmt.Fprintf(logFile, "ready - %s %d\n", id, time.Now().UnixNano())
	ns := os.Getenv(shardNSEnv)
	le := shardElection
	le.Namespace, le.Identity = ns, id
	op, err := runtime.New(cfg, runtime.Options{
		Name: "shard-test", Namespaces: []string{ns}, Sharding: true, LeaderElection: le,
		MetricsAddr: "0", HealthAddr: "0", Logger: logr.Discard(), Workers: 8,
	})
	if err != nil {
		return fail(err)
	}
	kind, err := testapi.KindFor(op)
	if err != nil {
		return fail(err)
	}
	record := func(what, key string) {
		// One write of a short line to a file opened O_APPEND: whole.
		_, _ = fmt.Fprintf(logFile, "%s %s %s %d\n", what, key, id, time.Now().UnixNano())
	}
	h := plug.HandlerFuncs[*testapi.Gadget]{OnReconcile: func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
		record("start", a.Object.Name)
		defer record("end", a.Object.Name)
		// Long enough, and often enough, that a handover without the
		// drain would meet a handling in flight.
		time.Sleep(150 * time.Millisecond)
		a.RequeueAfter(50 * time.Millisecond)
		return configMaps(ctx, a)
	}}
	if _, err := runtime.Register(op, kind, plug.Handler[*testapi.Gadget](h), runtime.ControllerOptions[*testapi.Gadget]{
		Owns: []schema.GroupVersionKind{configMapGVK},
	}); err != nil {
		return fail(err)
	}
	if err := op.Run(ctx); err != nil {
		return fail(err)
	}
	return 0
}

// shardReplica is a sharded replica process.
type shardReplica struct {
	id     string
	cmd    *exec.Cmd
	killed time.Time // when SIGKILL returned; zero otherwise
	done   chan error
}

type replicaSet struct {
	t       *testing.T
	ns, log string
	next    int
	mu      sync.Mutex
	all     []*shardReplica
}

func (s *replicaSet) start() *shardReplica {
	s.t.Helper()
	s.next++
	r := &shardReplica{id: fmt.Sprintf("replica-%d", s.next), done: make(chan error, 1)}
	r.cmd = exec.Command(os.Args[0], "-test.run=^$")
	r.cmd.Env = append(os.Environ(), shardReplicaEnv+"="+r.id, shardConfigEnv+"="+env.Kubeconfig, shardNSEnv+"="+s.ns, shardLogEnv+"="+s.log)
	r.cmd.Stderr = os.Stderr
	require.NoError(s.t, r.cmd.Start())
	go func() { r.done <- r.cmd.Wait() }()
	s.mu.Lock()
	s.all = append(s.all, r)
	s.mu.Unlock()
	s.t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		<-r.done
	})
	eventually(s.t, r.id+" catching SIGTERM", func() bool {
		data, err := os.ReadFile(s.log)
		return err == nil && strings.Contains(string(data), "ready - "+r.id+" ")
	})
	return r
}

func (s *replicaSet) kill(r *shardReplica) {
	s.t.Helper()
	require.NoError(s.t, r.cmd.Process.Signal(syscall.SIGKILL))
	<-r.done
	r.done <- nil // for the cleanup
	r.killed = time.Now()
}

func (s *replicaSet) stop(r *shardReplica) {
	s.t.Helper()
	require.NoError(s.t, r.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-r.done:
		assert.NoError(s.t, err, "%s exits cleanly on SIGTERM", r.id)
		r.done <- nil
	case <-time.After(60 * time.Second):
		s.t.Fatalf("%s did not exit within 60s of SIGTERM", r.id)
	}
}

// interval is one handling of an object by one replica; a replica killed
// while handling ends its interval when it was killed.
type interval struct {
	member     string
	start, end int64
}

// handlings reads the shared log: the intervals of every object.
func (s *replicaSet) handlings() map[string][]interval {
	s.t.Helper()
	f, err := os.Open(s.log)
	require.NoError(s.t, err)
	defer f.Close()
	killed := map[string]int64{}
	s.mu.Lock()
	for _, r := range s.all {
		if !r.killed.IsZero() {
			killed[r.id] = r.killed.UnixNano()
		}
	}
	s.mu.Unlock()
	open := map[[2]string]int64{}
	out := map[string][]interval{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 4 {
			continue // a line cut by a kill
		}
		at, err := strconv.ParseInt(fields[3], 10, 64)
		require.NoError(s.t, err)
		k := [2]string{fields[1], fields[2]}
		switch fields[0] {
		case "start":
			open[k] = at
		case "end":
			out[k[0]] = append(out[k[0]], interval{member: k[1], start: open[k], end: at})
			delete(open, k)
		}
	}
	for k, start := range open {
		end, ok := killed[k[1]]
		if !ok {
			end = time.Now().UnixNano() // still running
		}
		out[k[0]] = append(out[k[0]], interval{member: k[1], start: start, end: end})
	}
	return out
}

// TestShardingHandsOverWithoutOverlap runs three sharded replicas as
// processes over 60 objects, kills one (SIGKILL: the leader, then a member
// that does not lead), creates 5 objects and adds a replica, twice, then
// stops one gracefully, and checks from the replicas' log that every
// object was handled after each change and that no two replicas ever
// handled one object at the same time.
func TestShardingHandsOverWithoutOverlap(t *testing.T) {
	ns := env.Namespace(t)
	ctx := context.Background()
	n := 60
	for i := range n {
		createGadget(t, ns, fmt.Sprintf("g%02d", i), testapi.GadgetSpec{Size: 1, Message: "hi"})
	}
	gadgets := gadgetClient(t, ns)
	s := &replicaSet{t: t, ns: ns, log: filepath.Join(t.TempDir(), "handled.log")}
	require.NoError(t, os.WriteFile(s.log, nil, 0o644))
	live := map[*shardReplica]bool{}
	for range 3 {
		live[s.start()] = true
	}

	// settled waits until every object's bucket is assigned to a live
	// member, its ConfigMap is in the same bucket, and each was handled
	// by that member after since.
	settled := func(what string, since time.Time) {
		t.Helper()
		eventually(t, what, func() bool {
			members := map[string]bool{}
			for r := range live {
				members[runtime.MemberName(r.id)] = true
			}
			owners, err := runtime.ShardOwners(ctx, env.Clientset().CoordinationV1(), ns, "shard-test")
			if err != nil || len(owners) == 0 {
				return false
			}
			list, err := gadgets.List(ctx, metav1.ListOptions{})
			if err != nil || len(list.Items) != n {
				return false
			}
			handled := s.handlings()
			for _, g := range list.Items {
				bucket := g.Labels["shard.opgen.dev/shard-test"]
				b := runtime.ShardBucket(bucket)
				if b < 0 || !members[owners[b]] {
					return false
				}
				cm, err := env.Clientset().CoreV1().ConfigMaps(ns).Get(ctx, g.Name+"-0", metav1.GetOptions{})
				if err != nil || cm.Labels["shard.opgen.dev/shard-test"] != bucket {
					return false
				}
				if !handledBy(handled[g.Name], owners[b], since) {
					return false
				}
			}
			return true
		})
	}
	settled("every object handled by one of 3 members", time.Time{})
	// The first round kills the leader, the second a member that does not
	// lead. Objects created right after the kill are labelled by the
	// leader: in the first round, by the new leader, which saw them come
	// while it stood by.
	for round := range 2 {
		victim := leaderOf(t, live, ns)
		if round == 1 {
			victim = anyOtherThan(live, victim)
		}
		s.kill(victim)
		delete(live, victim)
		for range 5 {
			createGadget(t, ns, fmt.Sprintf("g%02d", n), testapi.GadgetSpec{Size: 1, Message: "hi"})
			n++
		}
		settled(fmt.Sprintf("round %d: the objects of killed %s handled by the others", round+1, victim.id), victim.killed)
		t.Logf("round %d: every object handled again %v after the kill of %s (lease %v)", round+1,
			lastFirstHandling(s.handlings(), victim.killed).Sub(victim.killed).Round(time.Millisecond), victim.id, shardElection.LeaseDuration)
		live[s.start()] = true
		settled(fmt.Sprintf("round %d: the objects moved to the added replica handled", round+1), time.Now())
	}
	leaving := anyOf(live)
	s.stop(leaving)
	delete(live, leaving)
	stopped := time.Now()
	settled("the objects of the stopped replica handled by the others", stopped)
	eventually(t, "the Leases of the members gone (killed twice, stopped once) deleted by the leader", func() bool {
		leases, err := env.Clientset().CoordinationV1().Leases(ns).List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		members := 0
		for _, l := range leases.Items {
			if strings.HasPrefix(l.Name, "shard-test-member-") {
				members++
			}
		}
		return members == len(live)
	})
	for r := range live {
		s.stop(r)
	}

	overlaps := 0
	handled := s.handlings()
	for name, ivs := range handled {
		sort.Slice(ivs, func(i, j int) bool { return ivs[i].start < ivs[j].start })
		for i := 1; i < len(ivs); i++ {
			for j := i - 1; j >= 0; j-- {
				if ivs[j].member != ivs[i].member && ivs[j].end > ivs[i].start {
					overlaps++
					t.Errorf("%s: handled by %s from %d to %d and by %s from %d", name, ivs[j].member, ivs[j].start, ivs[j].end, ivs[i].member, ivs[i].start)
				}
			}
		}
	}
	total := 0
	for _, ivs := range handled {
		total += len(ivs)
	}
	t.Logf("%d handlings of %d objects by %d replicas in all, %d overlaps", total, n, len(s.all), overlaps)
	assert.Len(t, handled, n, "every object was handled")
}

// lastFirstHandling returns the latest, over the objects, of the first
// handling that began after since: when the last object was handled again.
func lastFirstHandling(handled map[string][]interval, since time.Time) time.Time {
	var last int64
	for _, ivs := range handled {
		first := int64(0)
		for _, iv := range ivs {
			if iv.start > since.UnixNano() && (first == 0 || iv.start < first) {
				first = iv.start
			}
		}
		last = max(last, first)
	}
	return time.Unix(0, last)
}

// handledBy reports whether ivs has a whole handling by owner that began
// after since.
func handledBy(ivs []interval, owner string, since time.Time) bool {
	for _, iv := range ivs {
		if iv.member == ownerID(owner) && iv.start > since.UnixNano() && iv.end > iv.start {
			return true
		}
	}
	return false
}

// ownerID maps a member name back to the replica identity of the log.
func ownerID(member string) string {
	i := strings.LastIndex(member, "-")
	if i < 0 {
		return member
	}
	return member[:i]
}

// leaderOf returns the replica that holds the leader's Lease.
func leaderOf(t *testing.T, live map[*shardReplica]bool, ns string) *shardReplica {
	t.Helper()
	var leader *shardReplica
	eventually(t, "a leader among the live replicas", func() bool {
		l, err := env.Clientset().CoordinationV1().Leases(ns).Get(context.Background(), "shard-test", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return false
		}
		for r := range live {
			if r.id == *l.Spec.HolderIdentity {
				leader = r
			}
		}
		return leader != nil
	})
	return leader
}

// anyOtherThan returns one of the replicas other than r.
func anyOtherThan(live map[*shardReplica]bool, r *shardReplica) *shardReplica {
	for o := range live {
		if o != r {
			return o
		}
	}
	return nil
}

// anyOf returns one of the replicas.
func anyOf(live map[*shardReplica]bool) *shardReplica {
	for r := range live {
		return r
	}
	return nil
}

// One sharded replica in process: it joins, gets every bucket, handles
// every object, and its metrics say so.
func TestShardingAloneHandlesEverything(t *testing.T) {
	ns := env.Namespace(t)
	for i := range 5 {
		createGadget(t, ns, fmt.Sprintf("g%d", i), testapi.GadgetSpec{Size: 1})
	}
	h := newOperator(t, ns, nil, runtime.Options{Sharding: true, LeaderElection: shardElection})
	var handled sync.Map
	_, err := runtime.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](plug.HandlerFuncs[*testapi.Gadget]{
		OnReconcile: func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
			handled.Store(a.Object.Name, true)
			return configMaps(ctx, a)
		}}), runtime.ControllerOptions[*testapi.Gadget]{Owns: []schema.GroupVersionKind{configMapGVK}})
	require.NoError(t, err)
	h.start()
	member := runtime.MemberName(h.op.Options().LeaderElection.Identity)
	eventually(t, "every object in a bucket of the one member, and handled", func() bool {
		owners, err := runtime.ShardOwners(context.Background(), env.Clientset().CoordinationV1(), ns, h.op.Options().LeaderElection.LeaseName)
		if err != nil || len(owners) == 0 {
			return false
		}
		list, err := gadgetClient(t, ns).List(context.Background(), metav1.ListOptions{})
		if err != nil || len(list.Items) != 5 {
			return false
		}
		for _, g := range list.Items {
			b := runtime.ShardBucket(g.Labels["shard.opgen.dev/test-operator"])
			if _, ok := handled.Load(g.Name); !ok || b < 0 || owners[b] != member {
				return false
			}
		}
		return true
	})
	gather := func() map[string]float64 {
		families, err := h.op.Registry().Gather()
		require.NoError(t, err)
		got := map[string]float64{}
		for _, f := range families {
			for _, m := range f.GetMetric() {
				switch {
				case m.GetGauge() != nil:
					got[f.GetName()] += m.GetGauge().GetValue()
				case m.GetCounter() != nil:
					got[f.GetName()] += m.GetCounter().GetValue()
				}
			}
		}
		return got
	}
	// Buckets are taken a few at a time: the objects' may come first.
	eventually(t, "the one member to hold every bucket", func() bool { return gather()["opgen_shard_buckets"] == 64 })
	got := gather()
	assert.Equal(t, 5.0, got["opgen_shard_objects"], "the member's share")
	assert.Equal(t, 1.0, got["opgen_shard_members"])
	assert.Equal(t, 128.0, got["opgen_shard_moves_total"], "64 assignments and 64 takes")
	g0, err := gadgetClient(t, ns).Get(context.Background(), "g0", metav1.GetOptions{})
	require.NoError(t, err)
	cm, err := env.Clientset().CoreV1().ConfigMaps(ns).Get(context.Background(), "g0-0", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, g0.Labels["shard.opgen.dev/test-operator"], cm.Labels["shard.opgen.dev/test-operator"], "descendants are in their owner's bucket")
}

// A cluster-scoped kind is sharded like a namespaced one, and the sharder
// labels only the objects the controller's kind selects.
func TestShardingClusterScoped(t *testing.T) {
	ns := env.Namespace(t)
	ctx := context.Background()
	classes := env.Clientset().NetworkingV1().IngressClasses()
	create := func(name, selected string) {
		_, err := classes.Create(ctx, &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{
			Name: name, Labels: map[string]string{"opgen-test": selected},
		}, Spec: networkingv1.IngressClassSpec{Controller: "opgen.dev/test"}}, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = classes.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	for i := range 5 {
		create(fmt.Sprintf("%s-%d", ns, i), ns)
	}
	create(ns+"-other", "other")
	h := newOperator(t, ns, nil, runtime.Options{Sharding: true, LeaderElection: shardElection})
	var handled sync.Map
	kind := builtin.IngressClasses(h.op, builtin.Options{LabelSelector: "opgen-test=" + ns})
	_, err := runtime.Register(h.op, kind, plug.Handler[*networkingv1.IngressClass](plug.HandlerFuncs[*networkingv1.IngressClass]{
		OnReconcile: func(_ context.Context, a *plug.Action[*networkingv1.IngressClass]) error {
			handled.Store(a.Object.Name, true)
			return nil
		}}), runtime.ControllerOptions[*networkingv1.IngressClass]{})
	require.NoError(t, err)
	h.start()
	member := runtime.MemberName(h.op.Options().LeaderElection.Identity)
	eventually(t, "every selected IngressClass in a bucket of the one member, and handled", func() bool {
		owners, err := runtime.ShardOwners(ctx, env.Clientset().CoordinationV1(), ns, h.op.Options().LeaderElection.LeaseName)
		if err != nil || len(owners) == 0 {
			return false
		}
		for i := range 5 {
			c, err := classes.Get(ctx, fmt.Sprintf("%s-%d", ns, i), metav1.GetOptions{})
			if err != nil {
				return false
			}
			b := runtime.ShardBucket(c.Labels["shard.opgen.dev/test-operator"])
			if _, ok := handled.Load(c.Name); !ok || b < 0 || owners[b] != member {
				return false
			}
		}
		return true
	})
	other, err := classes.Get(ctx, ns+"-other", metav1.GetOptions{})
	require.NoError(t, err)
	assert.NotContains(t, other.Labels, "shard.opgen.dev/test-operator", "an object the kind does not select is not labelled")
	_, ok := handled.Load(ns + "-other")
	assert.False(t, ok, "nor handled")
}
