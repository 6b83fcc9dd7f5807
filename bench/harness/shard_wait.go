package main

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// waitMoved polls the Leases every 20ms until no bucket of buckets is
// assigned to member, and until other members report holding every one of
// them; it returns both times, zero for what did not happen by timeout.
func (s *suite) waitMoved(ctx context.Context, lease, member string, buckets []int, timeout time.Duration) (at [2]time.Time) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && at[1].IsZero() && ctx.Err() == nil {
		st, err := s.shardLeases(ctx, lease)
		if err == nil {
			now := time.Now()
			if at[0].IsZero() && !slices.ContainsFunc(buckets, func(b int) bool { return b >= len(st.assigned) || st.assigned[b] == member || st.assigned[b] == "" }) {
				at[0] = now
			}
			taken := map[int]bool{}
			for _, m := range st.members {
				if m.name != member {
					for _, b := range m.buckets {
						taken[b] = true
					}
				}
			}
			if !slices.ContainsFunc(buckets, func(b int) bool { return !taken[b] }) {
				at[1] = now
				if at[0].IsZero() {
					at[0] = now
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return at
}

// lastReconciledBy returns the objects whose latest reconcile by any of ps
// up to until was by p.
func lastReconciledBy(ps []*proc, p *proc, until time.Time) map[string]bool {
	type last struct {
		t time.Time
		p *proc
	}
	latest := map[string]last{}
	for _, q := range ps {
		for _, r := range q.traces() {
			if r.t.After(until) {
				continue
			}
			if l, ok := latest[r.name]; !ok || r.t.After(l.t) {
				latest[r.name] = last{r.t, q}
			}
		}
	}
	share := map[string]bool{}
	for name, l := range latest {
		if l.p == p {
			share[name] = true
		}
	}
	return share
}

// waitQuiet waits until p reconciled at least one object and no object it
// had not reconciled before for quiet; it returns the first reconcile of
// the last new object and how many objects p reconciled.
func waitQuiet(p *proc, quiet, timeout time.Duration) (time.Time, int, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		first := map[string]time.Time{}
		for _, r := range p.traces() {
			if _, ok := first[r.name]; !ok {
				first[r.name] = r.t
			}
		}
		last := latest(first)
		if len(first) > 0 && time.Since(last) >= quiet {
			return last, len(first), nil
		}
		if p.exited() {
			return time.Time{}, 0, &exitError{p: p, while: "waiting for the objects moved to it, added after a crash"}
		}
		time.Sleep(250 * time.Millisecond)
	}
	return time.Time{}, 0, fmt.Errorf("%s kept receiving objects for %v", p.variant, timeout)
}

// waitUnion waits until the replicas together reconciled n distinct
// objects and returns when the last of them was reconciled first.
func waitUnion(ps []*proc, n int, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if exit := exitedOf(ps, "waiting for the replicas to reconcile every object once"); exit != nil {
			return time.Time{}, exit
		}
		first := map[string]time.Time{}
		for _, p := range ps {
			for _, r := range p.traces() {
				if t, ok := first[r.name]; !ok || r.t.Before(t) {
					first[r.name] = r.t
				}
			}
		}
		if len(first) >= n {
			return latest(first), nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return time.Time{}, fmt.Errorf("the replicas did not reconcile all %d objects within %v", n, timeout)
}

// waitTaken waits until every object of share was reconciled by one of ps
// after since, and returns the first of those reconciles of each object.
func waitTaken(ps []*proc, share map[string]bool, since time.Time, timeout time.Duration) (map[string]time.Time, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if exit := exitedOf(ps, "waiting for the crashed replica's objects to be reconciled by the others"); exit != nil {
			return nil, exit
		}
		first := map[string]time.Time{}
		for _, p := range ps {
			for _, r := range p.traces() {
				if share[r.name] && r.t.After(since) {
					if t, ok := first[r.name]; !ok || r.t.Before(t) {
						first[r.name] = r.t
					}
				}
			}
		}
		if len(first) == len(share) {
			return first, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, fmt.Errorf("%d of %d objects were not reconciled again within %v", len(share)-countSince(ps, share, since), len(share), timeout)
}

// latest returns the latest of the times.
func latest(times map[string]time.Time) time.Time {
	var last time.Time
	for _, t := range times {
		if t.After(last) {
			last = t
		}
	}
	return last
}

// earliestOf returns the earliest of the times.
func earliestOf(times map[string]time.Time) time.Time {
	var first time.Time
	for _, t := range times {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	return first
}

// countSince counts the objects of share reconciled by one of ps after
// since.
func countSince(ps []*proc, share map[string]bool, since time.Time) int {
	seen := map[string]bool{}
	for _, p := range ps {
		for _, r := range p.traces() {
			if share[r.name] && r.t.After(since) {
				seen[r.name] = true
			}
		}
	}
	return len(seen)
}
