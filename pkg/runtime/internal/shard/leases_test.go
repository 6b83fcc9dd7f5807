package shard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func memberLease(name, holder string, renew time.Time, held string) *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if holder != "" {
		l.Spec.HolderIdentity = &holder
	}
	if !renew.IsZero() {
		rt := metav1.NewMicroTime(renew)
		l.Spec.RenewTime = &rt
	}
	if held != "" {
		l.Annotations = map[string]string{HeldAnnotation: held}
	}
	return l
}

// A member is live until LeaseDuration after its Lease was seen renewed,
// by this replica's clock; a report of what it holds is no renewal.
func TestMemberLeasesExpireFromTheRenewalSeen(t *testing.T) {
	c := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := newMemberLeases("op-member-", 5*time.Second, c)
	renewed := c.Now().Add(-time.Hour) // the member's clock is far off: it does not count
	m.observe(memberLease("op-member-a", "pod-a", renewed, ""), false)
	m.observe(memberLease("op-shards", "pod-a", renewed, ""), false)
	m.observe(memberLease("op-member-b", "pod-b", renewed, ""), false)

	live, _, next := m.live()
	assert.Equal(t, []string{"a", "b"}, live, "only member Leases count")
	assert.Equal(t, 5*time.Second, next)

	c.Step(3 * time.Second)
	m.observe(memberLease("op-member-a", "pod-a", renewed.Add(time.Second), ""), false)
	m.observe(memberLease("op-member-b", "pod-b", renewed, `{"generation":3,"buckets":[1,2]}`), false)
	live, held, next := m.live()
	assert.Equal(t, []string{"a", "b"}, live)
	assert.Equal(t, Held{Generation: 3, Buckets: []int{1, 2}}, held["b"], "the report is read")
	assert.Equal(t, 2*time.Second, next, "b's report did not renew its Lease")

	c.Step(2 * time.Second)
	live, held, next = m.live()
	assert.Equal(t, []string{"a"}, live, "b expired 5s after it was seen renewed")
	assert.NotContains(t, held, "b")
	assert.Equal(t, 3*time.Second, next)

	m.observe(memberLease("op-member-a", "", renewed.Add(2*time.Second), ""), false)
	live, _, next = m.live()
	assert.Empty(t, live, "a released its Lease")
	assert.Zero(t, next)

	m.observe(memberLease("op-member-c", "pod-c", c.Now(), ""), false)
	m.forget(memberLease("op-member-c", "", time.Time{}, ""))
	live, _, _ = m.live()
	assert.Empty(t, live, "a deleted Lease has no member")
}

// A replica that starts (the informer's initial list) counts a Lease from
// its renewal's time, never later than now: a leader that starts after the
// old one crashed does not wait a second LeaseDuration for the members
// that crashed with it.
func TestMemberLeasesOfTheInitialList(t *testing.T) {
	c := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := newMemberLeases("op-member-", 5*time.Second, c)
	m.observe(memberLease("op-member-dead", "pod-a", c.Now().Add(-6*time.Second), ""), true)
	m.observe(memberLease("op-member-old", "pod-b", c.Now().Add(-4*time.Second), ""), true)
	m.observe(memberLease("op-member-ahead", "pod-c", c.Now().Add(2*time.Second), ""), true)
	live, _, next := m.live()
	assert.Equal(t, []string{"ahead", "old"}, live)
	assert.Equal(t, time.Second, next, "old expires 5s after its renewal")

	m.observe(memberLease("op-member-old", "pod-b", c.Now().Add(-4*time.Second), `{"generation":1}`), false)
	_, _, next = m.live()
	assert.Equal(t, time.Second, next, "a report does not renew it")
}

// Replicas that start together share the buckets from the first
// assignment: the sharder waits while members are still joining, and not
// at all when a live member holds buckets already.
func TestColdStartWaitsForMembersToJoin(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	none := map[string]Held{"a": {}, "b": {}, "c": {}}

	c := coldStart{quiet: time.Second, limit: 5 * time.Second}
	assert.Equal(t, time.Second, c.wait(at(0), nil, nil), "no member yet")
	assert.Equal(t, time.Second, c.wait(at(100*time.Millisecond), []string{"a"}, none), "a joined")
	assert.Equal(t, time.Second, c.wait(at(600*time.Millisecond), []string{"a", "b"}, none), "b joined: wait again")
	assert.Equal(t, 500*time.Millisecond, c.wait(at(1100*time.Millisecond), []string{"a", "b"}, none))
	assert.Zero(t, c.wait(at(1600*time.Millisecond), []string{"a", "b"}, none), "no change for a second")
	assert.Zero(t, c.wait(at(1700*time.Millisecond), []string{"a", "b", "c"}, none), "once assigned, a join is a move")

	c = coldStart{quiet: time.Second, limit: 5 * time.Second}
	for i := range 9 {
		live := []string{"a"}
		if i%2 == 1 {
			live = append(live, "b")
		}
		assert.NotZero(t, c.wait(at(time.Duration(i)*600*time.Millisecond), live, none), "members flapping at %d", i)
	}
	assert.Zero(t, c.wait(at(5400*time.Millisecond), []string{"a"}, none), "at most limit after the first look")

	c = coldStart{quiet: time.Second, limit: 5 * time.Second}
	assert.Zero(t, c.wait(at(0), []string{"a", "b"}, map[string]Held{"a": {Buckets: []int{3}}, "b": {}}),
		"a member holds buckets: a running set, assign at once")
}

// A member whose Lease expired, or was released, a grace ago is stale:
// the sharder deletes its Lease. A live one, or one gone a moment ago, is
// not.
func TestStaleMemberLeases(t *testing.T) {
	c := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := newMemberLeases("op-member-", 5*time.Second, c)
	live := memberLease("op-member-live", "live", c.Now(), "")
	crashed := memberLease("op-member-crashed", "crashed", c.Now(), "")
	released := memberLease("op-member-left", "", c.Now(), "")
	crashed.ResourceVersion = "42"
	for _, l := range []*coordinationv1.Lease{live, crashed, released} {
		m.observe(l, false)
	}
	assert.Empty(t, m.stale(5*time.Second))
	c.Step(6 * time.Second)
	m.observe(memberLease("op-member-live", "live", c.Now(), ""), false) // renewed
	assert.Equal(t, map[string]string{"left": ""}, m.stale(5*time.Second), "released: stale a grace after")
	c.Step(5 * time.Second)
	assert.Equal(t, map[string]string{"left": "", "crashed": "42"}, m.stale(5*time.Second), "expired: stale a grace after its expiry")
}
