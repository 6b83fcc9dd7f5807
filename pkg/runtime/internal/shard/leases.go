package shard

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/clock"
)

// memberLeases judges the member Leases of sharding as the elector judges a
// lease: a member is live until its Lease's duration after this replica saw
// the Lease renewed, by this replica's own clock. Every replica follows
// them from its start, not only the leader, so that a new leader knows at
// once which members died while it stood by and reassigns their buckets
// without waiting a LeaseDuration of its own.
//
// A Lease first seen in the informer's initial list (this replica just
// started) counts from its renewal's time, bounded by now: its member stops
// working RenewDeadline after that renewal by its own clock, so this is
// safe while the replicas' clocks agree within LeaseDuration -
// RenewDeadline. A Lease seen later counts from the moment it was seen.
type memberLeases struct {
	prefix   string        // member Leases are prefix + member
	duration time.Duration // of a Lease that names none
	clock    clock.PassiveClock

	mu   sync.Mutex
	seen map[string]*memberSeen // by member name
}

// memberSeen is a member Lease as last seen changing.
type memberSeen struct {
	rv       string // the Lease's resource version
	holder   string
	renew    time.Time
	duration time.Duration
	seen     time.Time // by this replica's clock
	held     Held      // what the member reports it holds
}

func newMemberLeases(prefix string, duration time.Duration, c clock.PassiveClock) *memberLeases {
	return &memberLeases{prefix: prefix, duration: duration, clock: c, seen: map[string]*memberSeen{}}
}

// member returns the member name of a member Lease, false for another
// Lease.
func (m *memberLeases) member(l *coordinationv1.Lease) (string, bool) {
	name, ok := strings.CutPrefix(l.Name, m.prefix)
	return name, ok && name != ""
}

// observe records l as seen now; initial tells a Lease of the informer's
// initial list.
func (m *memberLeases) observe(l *coordinationv1.Lease, initial bool) {
	name, ok := m.member(l)
	if !ok {
		return
	}
	now := m.clock.Now()
	next := memberSeen{duration: m.duration, rv: l.ResourceVersion}
	if l.Spec.HolderIdentity != nil {
		next.holder = *l.Spec.HolderIdentity
	}
	if l.Spec.RenewTime != nil {
		next.renew = l.Spec.RenewTime.Time
	}
	if l.Spec.LeaseDurationSeconds != nil {
		next.duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	if raw, ok := l.Annotations[HeldAnnotation]; ok {
		_ = json.Unmarshal([]byte(raw), &next.held) // unreadable: holds nothing known, until the next report
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	last := m.seen[name]
	switch {
	case last != nil && last.holder == next.holder && last.renew.Equal(next.renew):
		next.seen = last.seen // not renewed: only the report changed
	case last == nil && initial && !next.renew.IsZero() && next.renew.Before(now):
		next.seen = next.renew
	default:
		next.seen = now
	}
	m.seen[name] = &next
}

// forget drops a deleted Lease: its member is gone.
func (m *memberLeases) forget(l *coordinationv1.Lease) {
	if name, ok := m.member(l); ok {
		m.mu.Lock()
		delete(m.seen, name)
		m.mu.Unlock()
	}
}

// live returns the live members, in order, what each reported it holds,
// and how long until the first of their Leases expires (0 without live
// members): the moment to look again.
func (m *memberLeases) live() (members []string, held map[string]Held, expiresIn time.Duration) {
	now := m.clock.Now()
	held = map[string]Held{}
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, s := range m.seen {
		left := s.seen.Add(s.duration).Sub(now)
		if s.holder == "" || left <= 0 {
			continue
		}
		members = append(members, name)
		held[name] = s.held
		if expiresIn == 0 || left < expiresIn {
			expiresIn = left
		}
	}
	slices.Sort(members)
	return members, held, expiresIn
}

// stale returns the members whose Lease expired, or was released, at
// least grace ago, with the Lease's resource version: a member gone for
// good, whose Lease the sharder deletes.
func (m *memberLeases) stale(grace time.Duration) map[string]string {
	now := m.clock.Now()
	out := map[string]string{}
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, s := range m.seen {
		end := s.seen.Add(s.duration)
		if s.holder == "" {
			end = s.seen
		}
		if now.Sub(end) >= grace {
			out[name] = s.rv
		}
	}
	return out
}

// coldStart holds back the sharder's first assignment while replicas that
// started together are still joining. When no live member holds a bucket
// (every replica starts at once, or the members the assignment names are
// gone), the first member to join would take every bucket and cache every
// object: for a moment it would need one unsharded replica's memory, which
// a memory limit sized for 1/N of the objects does not give it. So the
// sharder waits until the live members did not change for quiet, at most
// limit after its first look. A sharder that finds a member holding
// buckets (a new leader after a crash, a replica joining a running set)
// assigns at once.
type coldStart struct {
	quiet, limit time.Duration
	start, since time.Time
	members      []string
	done         bool
}

// wait returns how long to hold the assignment back; 0 to assign now.
func (c *coldStart) wait(now time.Time, live []string, held map[string]Held) time.Duration {
	if c.done {
		return 0
	}
	for _, h := range held {
		if len(h.Buckets) > 0 {
			c.done = true
			return 0
		}
	}
	if c.start.IsZero() {
		c.start = now
	}
	if !slices.Equal(live, c.members) {
		c.members, c.since = slices.Clone(live), now
	}
	left := min(c.since.Add(c.quiet).Sub(now), c.start.Add(c.limit).Sub(now))
	switch {
	case len(live) == 0:
		return c.quiet // nobody to assign to yet
	case left > 0:
		return left
	}
	c.done = true
	return 0
}
