// Package selectortest runs sharding on an API server with the shard
// selector of KEP-5866 (the ShardedListAndWatch feature gate on). The
// label buckets, on a server without it, are tested in pkg/runtime.
package selectortest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/shard"
	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

var env = testenv.New(testenv.Options{
	CRDDirs:        []string{"../../../../../test/testkit/testapi/crd"},
	Private:        true,
	APIServerFlags: []string{"--feature-gates=ShardedListAndWatch=true"},
})

func TestMain(m *testing.M) { env.Main(m) }

const (
	operator = "selector-operator"
	label    = shard.LabelDomain + operator
)

var configMapGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

// handled records which replica handled which Gadget.
type handled struct {
	mu sync.Mutex
	by map[string]map[string]bool // Gadget name → replicas
}

func (h *handled) add(name, replica string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.by[name] == nil {
		h.by[name] = map[string]bool{}
	}
	h.by[name][replica] = true
}

func (h *handled) take() map[string]map[string]bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.by
	h.by = map[string]map[string]bool{}
	return out
}

// replica starts one sharded replica of the operator, whose handler
// records itself, declares one ConfigMap and comes back in 100 ms. It
// returns the replica and its log lines so far.
func replica(t *testing.T, ns, identity string, h *handled) (*runtime.Operator, func() string) {
	var mu sync.Mutex
	var log strings.Builder
	logger := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(&log, prefix, args)
	}, funcr.Options{})
	op, err := runtime.New(env.Config, runtime.Options{
		Name: operator, Namespaces: []string{ns}, Sharding: true, Logger: logger,
		MetricsAddr: "0", HealthAddr: "0",
		LeaderElection: runtime.LeaderElectionOptions{Namespace: ns, Identity: identity,
			LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond},
	})
	require.NoError(t, err)
	kind, err := testapi.KindFor(op)
	require.NoError(t, err)
	require.NoError(t, testkit.Register(op, kind, plug.Handler[*testapi.Gadget](plug.HandlerFuncs[*testapi.Gadget]{
		OnReconcile: func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
			h.add(a.Object.Name, identity)
			a.Own(corev1ac.ConfigMap(a.Object.Name, ""))
			a.RequeueAfter(100 * time.Millisecond)
			return nil
		}}), runtime.ControllerOptions[*testapi.Gadget]{Owns: []schema.GroupVersionKind{configMapGVK}}))
	testkit.Run(t, op)
	return op, func() string {
		mu.Lock()
		defer mu.Unlock()
		return log.String()
	}
}

// owners reads the sharder's assignment: the member of each bucket, and
// whether a bucket is still draining.
func owners(t *testing.T, ns string) ([]string, bool) {
	l, err := env.Clientset().CoordinationV1().Leases(ns).Get(context.Background(), operator+"-shards", metav1.GetOptions{})
	if err != nil {
		return nil, false
	}
	a, err := shard.ReadAssignment(l)
	require.NoError(t, err)
	return a.Buckets, len(a.Draining) == 0 && len(a.Buckets) == shard.Buckets && !slices.Contains(a.Buckets, "")
}

// TestShardingByTheServerSelector: on an API server that applies shard
// selectors, each replica lists and watches its buckets of the Gadgets
// through them. No Gadget gets a bucket label; each is handled by the
// replica its UID's bucket is assigned to, and only by it; its
// ConfigMap carries that bucket as its label, for the owned kind's
// label-selected caches.
func TestShardingByTheServerSelector(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	hc, err := rest.HTTPClientFor(env.Config)
	require.NoError(t, err)
	gadgets, err := testapi.NewForConfigAndClient(env.Config, hc)
	require.NoError(t, err)
	for i := range 30 {
		_, err := gadgets.Gadgets(ns).Create(ctx, &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("g%02d", i)}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	h := &handled{by: map[string]map[string]bool{}}
	a, logA := replica(t, ns, "replica-a", h)
	assert.Contains(t, logA(), `"by"="the API server's shard selector, without labels"`)
	testkit.Eventually(t, "every Gadget handled by the one replica", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.by) == 30
	})
	b, _ := replica(t, ns, "replica-b", h)
	members := map[string]string{shard.MemberName("replica-a"): "replica-a", shard.MemberName("replica-b"): "replica-b"}
	var assigned []string
	testkit.Eventually(t, "the buckets spread over both replicas, none draining", func() bool {
		b, settled := owners(t, ns)
		spread := map[string]bool{}
		for _, m := range b {
			spread[m] = true
		}
		assigned = b
		return settled && len(spread) == 2
	})
	time.Sleep(time.Second) // the replicas let go of and take their buckets
	h.take()
	time.Sleep(1500 * time.Millisecond) // every Gadget comes back every 100 ms
	seen := h.take()
	after, settled := owners(t, ns)
	require.True(t, settled)
	require.Equal(t, assigned, after, "the assignment did not change while the handlings were recorded")

	list, err := gadgets.Gadgets(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 30)
	byReplica := map[string]int{}
	for _, g := range list.Items {
		assert.NotContains(t, g.Labels, label, "%s: no bucket label written", g.Name)
		b := shard.UIDBucket(g.UID)
		want := members[assigned[b]]
		assert.Equal(t, map[string]bool{want: true}, seen[g.Name], "%s (bucket %d) handled by its bucket's replica only", g.Name, b)
		byReplica[want]++
		cm, err := env.Clientset().CoreV1().ConfigMaps(ns).Get(ctx, g.Name, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, shard.Label(b), cm.Labels[label], "%s's ConfigMap is in its owner's bucket", g.Name)
		assert.True(t, metav1.IsControlledBy(cm, &g))
	}
	assert.Len(t, byReplica, 2, "both replicas have a share: %v", byReplica)
	for name, op := range map[string]*runtime.Operator{"replica-a": a, "replica-b": b} {
		assert.Equal(t, float64(byReplica[name]), testkit.Metric(t, op, "opgen_shard_objects"), "%s caches its share only: the server selected it", name)
	}
}
