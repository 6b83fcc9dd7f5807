package runtime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/builtin"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// A sharded replica of the tests runs as a process of the test binary
// (TestMain), so that a test can kill it for real.
const (
	shardReplicaEnv = "OPGEN_TEST_SHARD_REPLICA" // identity; set in a replica
	shardConfigEnv  = "OPGEN_TEST_SHARD_KUBECONFIG"
	shardNSEnv      = "OPGEN_TEST_SHARD_NAMESPACE"
	shardLogEnv     = "OPGEN_TEST_SHARD_LOG"
)

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
		if round == 0 {
			leader := leaderOf(t, live, ns)
			eventually(t, "the shards Lease held by the new leader "+leader.id, func() bool {
				l, err := env.Clientset().CoordinationV1().Leases(ns).Get(ctx, "shard-test-shards", metav1.GetOptions{})
				return err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == leader.id
			})
		}
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

// One sharded replica in process: it joins, gets every bucket, handles
// every object, and its metrics say so. Its cache is projected with
// CacheSpec: the field dropped never reaches Project or the handler, in
// the buckets' informers or in the sharder's.
func TestShardingAloneHandlesEverything(t *testing.T) {
	ns := env.Namespace(t)
	for i := range 5 {
		createGadget(t, ns, fmt.Sprintf("g%d", i), testapi.GadgetSpec{Size: 1, Message: "dropped"})
	}
	h := newOperator(t, ns, nil, runtime.Options{Sharding: true, LeaderElection: shardElection})
	var handled, arrived sync.Map // name: the spec the handler saw; message: Project saw it
	_, err := runtime.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](plug.HandlerFuncs[*testapi.Gadget]{
		OnReconcile: func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
			handled.Store(a.Object.Name, a.Object.Spec)
			return configMaps(ctx, a)
		}}), runtime.ControllerOptions[*testapi.Gadget]{
		Owns: []schema.GroupVersionKind{configMapGVK},
		Project: func(g *testapi.Gadget) {
			arrived.Store(g.Spec.Message, true)
			g.Spec = testapi.GadgetSpec{Size: g.Spec.Size}
		},
		CacheSpec: []string{"size"},
	})
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
	handled.Range(func(name, spec any) bool {
		assert.Equal(t, testapi.GadgetSpec{Size: 1}, spec, "%s: the handler sees what the projection keeps", name)
		return true
	})
	_, sawDropped := arrived.Load("dropped")
	assert.False(t, sawDropped, "CacheSpec drops the message before the decode, in every informer of the kind")
	_, sawAny := arrived.Load("")
	assert.True(t, sawAny, "Project ran")
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
