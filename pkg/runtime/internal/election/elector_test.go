package election

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// A renewal restarts the observed lease's expiry even within the second
// of the one before: a record's JSON holds its times to the second, so it
// cannot tell such renewals apart (RetryPeriod below 1s renews so).
func TestObserveSubSecondRenewals(t *testing.T) {
	c := clocktesting.NewFakeClock(time.Now())
	e := New(nil, Config{LeaseDuration: 3 * time.Second}, c, logr.Discard())
	base := time.Date(2026, 1, 1, 0, 0, 0, 100_000_000, time.UTC)
	r := resourcelock.LeaderElectionRecord{HolderIdentity: "other", LeaseDurationSeconds: 3, RenewTime: metav1.NewTime(base)}
	e.observe(r, "")
	c.Step(2 * time.Second)
	r.RenewTime = metav1.NewTime(base.Add(500 * time.Millisecond))
	e.observe(r, "")
	assert.Equal(t, 3*time.Second, e.expiresIn(), "the renewal restarted the expiry")
	c.Step(time.Second)
	e.observe(r, "")
	assert.Equal(t, 2*time.Second, e.expiresIn(), "the same record again does not")
}

// A replica stopped while its acquiring write is under way releases the
// lease when the write landed with its answer unread: otherwise the
// lease stays held, with nobody working, until it expires.
func TestStoppedWhileAcquiringReleases(t *testing.T) {
	cs := fake.NewClientset()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	cs.PrependReactor("create", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		create := a.(k8stesting.CreateAction)
		if err := cs.Tracker().Create(a.GetResource(), create.GetObject(), a.GetNamespace()); err != nil {
			return true, nil, err
		}
		stop() // the replica is stopped as the answer would come
		return true, nil, context.Canceled
	})
	e := New(cs.CoordinationV1(), Config{Namespace: "ns", LeaseName: "lease", Identity: "me",
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}, clock.RealClock{}, logr.Discard())
	led := false
	require.NoError(t, e.Run(ctx, func(context.Context) bool { led = true; return true }))
	assert.False(t, led, "led although the acquire failed")
	l, err := cs.CoordinationV1().Leases("ns").Get(context.Background(), "lease", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, ptr.Deref(l.Spec.HolderIdentity, ""), "the lease the cut write took is released")
}
