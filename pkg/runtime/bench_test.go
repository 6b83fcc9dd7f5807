package runtime_test

import (
	"context"
	"fmt"
	"log/slog"
	goruntime "runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// benchNamespace creates a namespace for a benchmark.
func benchNamespace(b *testing.B) string {
	b.Helper()
	return env.Namespace(b)
}

func benchOperator(b *testing.B, ns string, opts runtime.Options) (*runtime.Operator, runtime.Kind[*testapi.Gadget]) {
	b.Helper()
	opts.Name = "bench-operator"
	opts.Namespaces = []string{ns}
	opts.MetricsAddr, opts.HealthAddr = "0", "0"
	opts.Logger = logr.FromSlogHandler(slog.DiscardHandler)
	if opts.LeaderElection.Namespace == "" {
		opts.LeaderElection.Namespace = ns
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 1000, 1000
	op, err := runtime.New(cfg, opts)
	require.NoError(b, err)
	kind, err := testapi.KindFor(op)
	require.NoError(b, err)
	return op, kind
}

func runOperator(b *testing.B, op *runtime.Operator) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	eventually(b, "the caches to sync", op.Ready)
	return func() { cancel(); <-done }
}

// BenchmarkNoopReconcile measures one Reconcile that changes nothing,
// through the full default pipeline, for a Gadget that owns two
// ConfigMaps: the status and both descendants are compared with the cache
// and skipped. It fails if the loop made any API write.
func BenchmarkNoopReconcile(b *testing.B) {
	ns := benchNamespace(b)
	op, kind := benchOperator(b, ns, runtime.Options{LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
	ctrl, err := runtime.Register(op, kind, plug.Handler[*testapi.Gadget](&deleter{handler{calls: &calls{}, fn: configMaps}}),
		runtime.ControllerOptions[*testapi.Gadget]{Owns: []schema.GroupVersionKind{configMapGVK}})
	require.NoError(b, err)
	stop := runOperator(b, op)
	defer stop()
	createGadget(b, ns, "g", testapi.GadgetSpec{Size: 2, Message: "steady"})
	key := cache.ObjectName{Namespace: ns, Name: "g"}
	eventually(b, "a steady state", func() bool {
		g, ok := ctrl.Get(key)
		cms, err := env.Clientset().CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{LabelSelector: plug.ManagedByLabelKey})
		return ok && g.Status.ObservedGeneration == 1 && len(g.Finalizers) == 1 && err == nil && len(cms.Items) == 2
	})
	time.Sleep(200 * time.Millisecond) // let the caches take the last writes
	writes := metric(b, op, "opgen_api_writes_total", "controller", "gadget", "what", "status")
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		runtime.Handle(ctx, ctrl, key)
	}
	b.StopTimer()
	if after := metric(b, op, "opgen_api_writes_total", "controller", "gadget", "what", "status"); after != writes {
		b.Fatalf("a no-op reconcile wrote the status %v times", after-writes)
	}
}

var fleetOnce sync.Once

// fleet creates n Gadgets in one namespace, once per test binary, each
// with a status written by server-side apply so that its managedFields
// hold two entries as on a real cluster.
func fleet(b *testing.B, n int) string {
	var ns string
	fleetOnce.Do(func() {
		ns = benchNamespace(b)
		fleetNamespace = ns
		c := gadgetClient(b, ns)
		var wg sync.WaitGroup
		work := make(chan int)
		for range 16 {
			wg.Go(func() {
				for i := range work {
					name := fmt.Sprintf("g-%05d", i)
					_, err := c.Create(context.Background(), &testapi.Gadget{
						ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "bench", "tier": "backend"}},
						Spec:       testapi.GadgetSpec{Size: int32(i % 7), Message: "a message of moderate length for object " + name},
					}, metav1.CreateOptions{})
					if err != nil {
						panic(err)
					}
					status := fmt.Sprintf(`{"apiVersion":"test.opgen.dev/v1","kind":"Gadget","metadata":{"name":%q},"status":{"observedGeneration":1,"phase":"Ready"}}`, name)
					if _, err := c.Patch(context.Background(), name, types.ApplyPatchType, []byte(status), metav1.PatchOptions{FieldManager: "someone", Force: ptr.To(true)}, "status"); err != nil {
						panic(err)
					}
				}
			})
		}
		for i := range n {
			work <- i
		}
		close(work)
		wg.Wait()
	})
	return fleetNamespace
}

var fleetNamespace string

// BenchmarkCacheMemoryPerObject reports the heap an operator's cache of
// 10,000 Gadgets takes per object (B/object), with managedFields stripped
// (the default) and kept. The operator stands by behind a lease held by
// another replica, so it caches without handling.
func BenchmarkCacheMemoryPerObject(b *testing.B) {
	const n = 10000
	ns := fleet(b, n)
	for _, keep := range []bool{false, true} {
		name := "stripped"
		if keep {
			name = "managedFields"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.ReportMetric(cacheBytesPerObject(b, ns, n, keep), "B/object")
			}
		})
	}
}

func cacheBytesPerObject(b *testing.B, ns string, n int, keep bool) float64 {
	leaseNS := benchNamespace(b)
	now := metav1.NewMicroTime(time.Now())
	_, err := env.Clientset().CoordinationV1().Leases(leaseNS).Create(context.Background(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-operator"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("other"), LeaseDurationSeconds: ptr.To[int32](3600), RenewTime: &now},
	}, metav1.CreateOptions{})
	require.NoError(b, err)
	before := heap()
	op, kind := benchOperator(b, ns, runtime.Options{KeepManagedFields: keep, LeaderElection: runtime.LeaderElectionOptions{Namespace: leaseNS}})
	require.NoError(b, testkit.Register(op, kind, plug.Handler[*testapi.Gadget](plug.HandlerFuncs[*testapi.Gadget]{}), runtime.ControllerOptions[*testapi.Gadget]{}))
	stop := runOperator(b, op)
	after := heap()
	goruntime.KeepAlive(op)
	stop()
	return float64(after-before) / float64(n)
}

func heap() uint64 {
	goruntime.GC()
	debug.FreeOSMemory()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkWriteToReconcile measures the time from a spec change (the
// PATCH call) to the start of its Modify.
func BenchmarkWriteToReconcile(b *testing.B) {
	ns := benchNamespace(b)
	op, kind := benchOperator(b, ns, runtime.Options{LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
	started := make(chan int64, 1)
	require.NoError(b, testkit.Register(op, kind, plug.Handler[*testapi.Gadget](plug.HandlerFuncs[*testapi.Gadget]{
		OnModify: func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
			started <- a.Object.Generation
			return nil
		},
	}), runtime.ControllerOptions[*testapi.Gadget]{}))

	stop := runOperator(b, op)
	defer stop()
	createGadget(b, ns, "g", testapi.GadgetSpec{})
	c := gadgetClient(b, ns)
	gen := int64(1)
	b.ResetTimer()
	for b.Loop() {
		gen++
		_, err := c.Patch(context.Background(), "g", types.MergePatchType, fmt.Appendf(nil, `{"spec":{"size":%d}}`, gen), metav1.PatchOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for g := <-started; g != gen; g = <-started {
		}
	}
}

// BenchmarkLeaderHandover measures a graceful handover: from cancelling
// the leader's Run to the standby leading.
func BenchmarkLeaderHandover(b *testing.B) {
	ns := benchNamespace(b)
	le := runtime.LeaderElectionOptions{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}
	newOp := func() *runtime.Operator {
		op, kind := benchOperator(b, ns, runtime.Options{LeaderElection: le})
		require.NoError(b, testkit.Register(op, kind, plug.Handler[*testapi.Gadget](plug.HandlerFuncs[*testapi.Gadget]{}), runtime.ControllerOptions[*testapi.Gadget]{}))
		return op
	}
	leader := newOp()
	stopLeader := runOperator(b, leader)
	eventually(b, "a leader", leader.Leading)
	var took time.Duration
	for b.Loop() {
		standby := newOp()
		stopStandby := runOperator(b, standby)
		time.Sleep(100 * time.Millisecond) // the standby has read and is watching the lease
		start := time.Now()
		stopped := make(chan struct{})
		go func() { stopLeader(); close(stopped) }()
		for !standby.Leading() {
			time.Sleep(time.Millisecond)
		}
		took += time.Since(start)
		<-stopped
		leader, stopLeader = standby, stopStandby
	}
	stopLeader()
	b.ReportMetric(float64(took.Milliseconds())/float64(b.N), "ms/handover")
}

var _ = corev1.SchemeGroupVersion

// BenchmarkOwnedObjectMemory reports the heap the operator's cache of
// 2,000 owned ConfigMaps takes per object (B/object). Each was applied
// by the operator's field manager, with a controller owner of its own,
// and touched by another manager, so its managedFields hold two entries as
// on a real cluster; the cache keeps what descendant convergence compares
// of the operator's own entry and strips the rest.
func BenchmarkOwnedObjectMemory(b *testing.B) {
	const n = 2000
	ns := benchNamespace(b)
	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	var wg sync.WaitGroup
	work := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range work {
				name := fmt.Sprintf("cm-%05d", i)
				body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":{"app.kubernetes.io/managed-by":"bench-operator"},"annotations":{"opgen.dev/applied-hash":"0123456789abcdef01234567"},"ownerReferences":[{"apiVersion":"test.opgen.dev/v1","kind":"Gadget","name":%q,"uid":"00000000-0000-4000-8000-%012d","controller":true}]},"data":{"message":"a message of moderate length for object %s","size":"3"}}`, name, name, i, name)
				if _, err := cms.Patch(context.Background(), name, types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: "bench-operator", Force: ptr.To(true)}); err != nil {
					panic(err)
				}
				if _, err := cms.Patch(context.Background(), name, types.MergePatchType, []byte(`{"metadata":{"labels":{"other":"x"}}}`), metav1.PatchOptions{FieldManager: "someone"}); err != nil {
					panic(err)
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	for b.Loop() {
		before := heap()
		op, kind := benchOperator(b, ns, runtime.Options{LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
		require.NoError(b, testkit.Register(op, kind, plug.Handler[*testapi.Gadget](plug.HandlerFuncs[*testapi.Gadget]{}),
			runtime.ControllerOptions[*testapi.Gadget]{Owns: []schema.GroupVersionKind{configMapGVK}}))
		stop := runOperator(b, op)
		after := heap()
		goruntime.KeepAlive(op)
		stop()
		b.ReportMetric(float64(after-before)/n, "B/object")
	}
}
