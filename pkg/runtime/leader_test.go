package runtime_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// fastElection keeps leader election tests short.
var fastElection = runtime.LeaderElectionOptions{LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond}

// replica is one of two operators that share a lease.
type replica struct {
	*harness
	calls *calls
}

// newReplica starts a replica whose handler flags overlap when it runs
// while the other replica's handler (active[other]) runs.
func newReplica(t *testing.T, ns string, id int, le runtime.LeaderElectionOptions, active *[2]atomic.Int32, overlap *atomic.Bool) replica {
	le.Identity = fmt.Sprint("replica-", id)
	h := newOperator(t, ns, nil, runtime.Options{LeaderElection: le})
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c, fn: func(context.Context, *plug.Action[*testapi.Gadget]) error {
		active[id].Add(1)
		if active[1-id].Load() > 0 {
			overlap.Store(true)
		}
		time.Sleep(time.Millisecond)
		active[id].Add(-1)
		return nil
	}}), runtime.ControllerOptions[*testapi.Gadget]{}))

	h.start()
	return replica{h, c}
}

// TestLeaderElection runs two replicas: exactly one works; when it shuts
// down the other takes over at once, and handlers never overlap.
func TestLeaderElection(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	var active [2]atomic.Int32
	var overlap atomic.Bool
	// Tries 20 to 24 s apart: a standby that waited for its next try
	// instead of seeing the release would almost never take over within
	// the handover bound below, and a loaded machine has seconds of slack.
	le := runtime.LeaderElectionOptions{LeaseDuration: time.Minute, RenewDeadline: 40 * time.Second, RetryPeriod: 20 * time.Second}
	a := newReplica(t, ns, 0, le, &active, &overlap)
	b := newReplica(t, ns, 1, le, &active, &overlap)
	eventually(t, "a leader", func() bool { return a.op.Leading() || b.op.Leading() })
	leader, standby := a, b
	if b.op.Leading() {
		leader, standby = b, a
	}
	assert.False(t, standby.op.Leading())
	assert.Equal(t, 1.0, metric(t, leader.op, "opgen_leader"))
	assert.Equal(t, 0.0, metric(t, standby.op, "opgen_leader"))

	for i := range 5 {
		createGadget(t, ns, fmt.Sprintf("before-%d", i), testapi.GadgetSpec{})
	}
	for i := range 5 {
		name := fmt.Sprintf("before-%d", i)
		eventually(t, name+" handled by the leader", func() bool { return len(leader.calls.of(name)) > 0 })
	}
	assert.Zero(t, standby.calls.n.Load(), "the standby works while the leader does")

	start := time.Now()
	require.NoError(t, leader.stop())
	eventually(t, "the standby to lead", standby.op.Leading)
	handover := time.Since(start)
	t.Logf("graceful handover took %s", handover)
	assert.Less(t, handover, 5*time.Second, "a released lease is taken at once, not at the next retry (%s away)", le.RetryPeriod)

	createGadget(t, ns, "after", testapi.GadgetSpec{})
	eventually(t, "the new leader handles new objects", func() bool { return len(standby.calls.of("after")) > 0 })
	assert.False(t, overlap.Load(), "two replicas handled objects at the same time")
}

// TestExpiredLeaseIsTaken: a standby takes the lease of a leader that
// crashed (stopped renewing) as the lease expires, LeaseDuration after the
// last renewal it saw, not up to a RetryPeriod later.
func TestExpiredLeaseIsTaken(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	leases := env.Clientset().CoordinationV1().Leases(ns)
	ctx := context.Background()
	now := metav1.NewMicroTime(time.Now())
	_, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "test-operator"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("crashed"),
			LeaseDurationSeconds: ptr.To[int32](3),
			AcquireTime:          &now,
			RenewTime:            &now,
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	// Tries 5.8 to 7 s apart, while the window asserted below is 1.5 s: an
	// elector that waited for its next try would rarely land in it.
	le := runtime.LeaderElectionOptions{LeaseDuration: 6 * time.Second, RenewDeadline: 5900 * time.Millisecond, RetryPeriod: 5800 * time.Millisecond}
	// The standby's first read of the lease and its watch, seen on its
	// connection.
	var read, watching atomic.Bool
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/leases") {
				if r.URL.Query().Get("watch") == "true" {
					watching.Store(true)
				} else if strings.HasSuffix(r.URL.Path, "/leases/test-operator") {
					read.Store(true)
				}
			}
			return resp, err
		})
	})
	h := newOperator(t, ns, cfg, runtime.Options{LeaderElection: le})
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}}), runtime.ControllerOptions[*testapi.Gadget]{}))
	h.start()

	// The old leader renews once more while the standby watches, then
	// crashes. Not while the standby's first read is in flight: the read
	// could answer the record before the renewal after the watch brought
	// the renewal, and the standby would count from the older record.
	eventually(t, "the standby to read and watch the lease", func() bool { return read.Load() && watching.Load() })
	lease, err := leases.Get(ctx, "test-operator", metav1.GetOptions{})
	require.NoError(t, err)
	renewed := time.Now()
	lease.Spec.RenewTime = ptr.To(metav1.NewMicroTime(renewed))
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	require.NoError(t, err)

	eventually(t, "leadership", h.op.Leading)
	took := time.Since(renewed)
	t.Logf("took the crashed leader's lease %s after its last renewal", took)
	assert.GreaterOrEqual(t, took, 3*time.Second, "a held lease is respected until it expires (the Lease's own 3 s)")
	assert.Less(t, took, 3*time.Second+1500*time.Millisecond, "the lease is taken as it expires")
}

// TestLostLeadershipStopsWork: when another holder takes the lease (as
// after a partition), the leader stops within RenewDeadline, cancels its
// in-flight handlers and Run returns ErrLostLeadership.
func TestLostLeadershipStopsWork(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{LeaderElection: fastElection})
	entered, cancelled := make(chan struct{}), make(chan struct{})
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}, fn: func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
		close(entered)
		<-ctx.Done()
		close(cancelled)
		return ctx.Err()
	}}), runtime.ControllerOptions[*testapi.Gadget]{}))

	h.start()
	eventually(t, "leadership", h.op.Leading)
	createGadget(t, ns, "g", testapi.GadgetSpec{})
	<-entered

	leases := env.Clientset().CoordinationV1().Leases(ns)
	ctx := context.Background()
	require.NoError(t, retryOnConflict(func() error {
		lease, err := leases.Get(ctx, "test-operator", metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.NewMicroTime(time.Now())
		lease.Spec.HolderIdentity, lease.Spec.RenewTime, lease.Spec.LeaseDurationSeconds = ptr.To("thief"), &now, ptr.To[int32](3600)
		_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
		return err
	}))
	stolen := time.Now()
	select {
	case err := <-h.done:
		h.cancel = nil
		assert.ErrorIs(t, err, runtime.ErrLostLeadership)
	case <-time.After(30 * time.Second):
		t.Fatal("Run went on after the lease was taken")
	}
	<-cancelled
	assert.False(t, h.op.Leading())
	assert.Less(t, time.Since(stolen), fastElection.RenewDeadline+fastElection.RetryPeriod+time.Second)
}

func retryOnConflict(f func() error) error {
	var err error
	for range 10 {
		if err = f(); err == nil || !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}

// TestCampaignsWhileCachesFill: a replica campaigns while its caches
// fill, so that it works as its last cache syncs. Until then it holds the
// Lease without working (an owned kind that is not served keeps its
// caches from syncing here), and a shutdown before the sync releases it.
func TestCampaignsWhileCachesFill(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	createGadget(t, ns, "waiting", testapi.GadgetSpec{})
	le := fastElection
	le.Identity = "filling"
	h := newOperator(t, ns, nil, runtime.Options{LeaderElection: le})
	c := &calls{}
	notServed := schema.GroupVersionKind{Group: ns + ".opgen.test", Version: "v1", Kind: "Widget"}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c}),
		runtime.ControllerOptions[*testapi.Gadget]{Owns: []schema.GroupVersionKind{notServed}}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.op.Run(ctx) }()
	t.Cleanup(cancel)

	leases := env.Clientset().CoordinationV1().Leases(ns)
	holder := func() string {
		l, err := leases.Get(context.Background(), "test-operator", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	eventually(t, "the Lease held while the caches fill", func() bool { return holder() == "filling" })
	assert.False(t, h.op.Ready(), "ready while an owned kind is not served")
	assert.False(t, h.op.Leading(), "working before the caches synced")
	assert.Zero(t, c.n.Load(), "a handler ran before the caches synced")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("Run did not return within 60s of cancel")
	}
	assert.Empty(t, holder(), "the Lease is released on shutdown")
	assert.Zero(t, c.n.Load())
}
