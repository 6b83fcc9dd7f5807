package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// userChanges is how many objects benchUserChange changes in one round.
const userChanges = 10

// benchUserChange measures how long a change someone makes during a cold
// start waits: the operator starts over the large namespace, and as soon
// as it reconciles its first object, userChanges objects it has not
// reconciled yet get a spec change, one every 50ms. The latency of each is
// from the patch to the first reconcile of its new generation; a round
// reports their median. controller-runtime runs with its priority queue,
// on by default, which puts the initial list behind other events too.
//
// Once every object is reconciled, userChanges more objects get the same
// change: that latency is the floor (the patch itself, the watch event,
// one reconcile) with no queue to wait in, so what the cold start adds
// over it is what the queue's order costs.
func (s *suite) benchUserChange(ctx context.Context) error {
	n := s.cfg.large
	for r := range s.cfg.rounds {
		for _, v := range order(r, s.variants(opgen, cr)...) {
			cold, first, idle, err := s.userChangeOnce(ctx, v, n, r)
			if err != nil {
				return err
			}
			s.res.add("userchange.seconds", v, cold)
			s.res.add("userchange.idle.seconds", v, idle)
			s.res.add("userchange.excess.seconds", v, cold-idle)
			s.res.add("userchange.first.seconds", v, first)
		}
	}
	for _, v := range s.variants(opgen, cr) {
		logf("   %s a change during the cold start of %d objects waited %v s, once idle %v s", v, n, fmtSeries(s.res.get("userchange.seconds", v)), fmtSeries(s.res.get("userchange.idle.seconds", v)))
	}
	return nil
}

func (s *suite) userChangeOnce(ctx context.Context, v string, n, round int) (cold, first, idle float64, err error) {
	ns := namespace(v, "large")
	p, err := s.startOperator(v, opts{namespace: ns, mode: "noop", workers: s.cfg.workers, expect: n, trace: true,
		leader: true, leaseName: s.leaseName("userchange-" + v), lease: s.cfg.stockLease})
	if err != nil {
		return 0, 0, 0, err
	}
	defer p.stop()
	deadline := time.Now().Add(s.cfg.scaled(3 * time.Minute))
	for len(p.traces()) == 0 { // waiting for the first reconcile after the caches synced
		if time.Now().After(deadline) {
			return 0, 0, 0, fmt.Errorf("%s: no reconcile within %v of the start", v, s.cfg.scaled(3*time.Minute))
		}
		time.Sleep(5 * time.Millisecond)
	}
	patch := s.specPatcher(groupOf(v), ns)
	rng := rand.New(rand.NewPCG(uint64(round), 7))
	done := map[string]bool{}
	for _, rc := range p.traces() {
		done[rc.name] = true
	}
	cold, first, err = changeAndWait(ctx, p, patch, rng, n, done, deadline)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%s, during the cold start: %w", v, err)
	}
	if _, err := p.waitAll(time.Until(deadline)); err != nil {
		return 0, 0, 0, fmt.Errorf("%s: waiting for all %d objects to be reconciled: %w", v, n, err)
	}
	idle, _, err = changeAndWait(ctx, p, patch, rng, n, done, deadline)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%s, once idle: %w", v, err)
	}
	return cold, first, idle, nil
}

// changeAndWait changes userChanges objects not in done, one every 50ms,
// and returns the median latency from a patch to the first reconcile of
// its generation (or a later one: firsts.handled; each object is changed
// once), and the first change's.
func changeAndWait(ctx context.Context, p *proc, patch func(context.Context, string, []byte) (int64, error), rng *rand.Rand, n int, done map[string]bool, deadline time.Time) (median, first float64, err error) {
	type change struct {
		name string
		gen  int64
		at   time.Time
	}
	var changes []change
	for len(changes) < userChanges {
		name := objectName(rng.IntN(n))
		if done[name] {
			continue
		}
		done[name] = true
		at := time.Now()
		gen, err := patch(ctx, name, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, 2000+rng.IntN(1000000)))
		if err != nil {
			return 0, 0, err
		}
		changes = append(changes, change{name, gen, at})
		time.Sleep(50 * time.Millisecond)
	}
	var lat []float64
	for len(lat) < len(changes) {
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("%d of %d changes not reconciled in time", len(changes)-len(lat), len(changes))
		}
		time.Sleep(20 * time.Millisecond)
		recs := firsts{}
		for _, rc := range p.traces() {
			recs.add(rc.name, rc.gen, rc.t)
		}
		lat = lat[:0]
		for _, c := range changes {
			if t, ok := recs.handled(c.name, c.gen); ok {
				lat = append(lat, t.Sub(c.at).Seconds())
			}
		}
	}
	first = lat[0]
	slices.Sort(lat)
	return lat[len(lat)/2], first, nil
}
