package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// benchOwned measures memory with N Loads each owning one ConfigMap: a
// warm-up run per framework creates the ConfigMaps, then each round starts
// an operator over them and measures its heap once everything was
// reconciled and nothing is written any more.
func (s *suite) benchOwned(ctx context.Context) error {
	n := s.cfg.large
	for _, v := range s.variants(opgen, cr) {
		p, err := s.startOperator(v, opts{namespace: namespace(v, "large"), mode: "owned", workers: s.cfg.workers, expect: n,
			leader: true, leaseName: s.leaseName("ownedwarm-" + v), lease: s.cfg.stockLease})
		if err != nil {
			return err
		}
		if _, err := p.waitAll(s.cfg.scaled(5 * time.Minute)); err != nil {
			return err
		}
		err = waitSettled(p, 0, 2*time.Second, s.cfg.scaled(5*time.Minute))
		st, _ := p.stats(false)
		logf("   warm-up %s: %v", v, st.Writes)
		p.stop()
		if err != nil {
			return err
		}
	}
	variants := s.variants(opgen, cr, crTuned)
	for r := range s.cfg.rounds {
		for _, v := range order(r, variants...) {
			waitIdle()
			p, err := s.startOperator(v, opts{namespace: namespace(v, "large"), mode: "owned", workers: s.cfg.workers, expect: n,
				leader: true, leaseName: s.leaseName("owned-" + v), lease: s.cfg.stockLease, trace: os.Getenv("BENCH_TRACE") != ""})
			if err != nil {
				return err
			}
			profiled := make(chan struct{})
			if dir := os.Getenv("BENCH_CPU_PROFILES"); dir != "" {
				go func() {
					defer close(profiled)
					saveCPUProfile(p, 8*time.Second, filepath.Join(dir, fmt.Sprintf("owned-%s-%d.pprof", v, r)))
				}()
			} else {
				close(profiled)
			}
			all, err := p.waitAll(s.cfg.scaled(3 * time.Minute))
			if err == nil {
				err = waitSettled(p, 0, time.Second, s.cfg.scaled(time.Minute))
			}
			<-profiled
			if err != nil {
				p.stop()
				return err
			}
			s.res.add("coldstart.owned.seconds", v, all.Sub(p.start).Seconds())
			if tr := p.traces(); len(tr) > 0 {
				first := slices.MinFunc(tr, func(a, b rec) int { return a.t.Compare(b.t) }).t
				logf("   %s round %d: from the start to the first reconcile %.2fs (the caches filling), then %.2fs to reconcile all",
					v, r, first.Sub(p.start).Seconds(), all.Sub(first).Seconds())
			}
			peak, _ := p.memory()
			st, err := p.stats(true)
			p.stop()
			if err != nil {
				return err
			}
			s.res.add("peakrss.owned.bytes", v, peak)
			s.res.add("heap.owned.bytes", v, float64(st.HeapBytes))
			s.res.add("owned.writes", v, float64(objectWrites(st.Writes)))
			if err := s.ownedLoadsHeap(v, n); err != nil {
				return err
			}
		}
	}
	for _, v := range variants {
		owned, empty, noop := s.res.get("heap.owned.bytes", v), s.res.get("heap.empty.bytes", v), s.res.get("heap.large.bytes", v)
		for i := range min(len(owned), len(empty)) {
			s.res.add("heap.owned.perobject.bytes", v, (owned[i]-empty[i])/float64(n))
		}
		loads := s.res.get("heap.ownedloads.bytes", v)
		for i := range min(len(loads), len(empty)) {
			s.res.add("heap.ownedloads.perobject.bytes", v, (loads[i]-empty[i])/float64(n))
		}
		for i := range min(len(owned), len(loads)) {
			s.res.add("heap.perconfigmap.bytes", v, (owned[i]-loads[i])/float64(n))
		}
		logf("   %s heap of the Loads alone as the owned mode caches them %v (of the no-op mode: %v)",
			v, fmtSeries(loads), fmtSeries(noop))
		logf("   %s owned heap %v, writes on restart %v", v, fmtSeries(s.res.get("heap.owned.bytes", v)), s.res.get("owned.writes", v))
	}
	return nil
}

// ownedLoadsHeap measures the heap of v over the owned mode's Loads
// without their ConfigMaps: the no-op handler, with opgen's cache keeping
// the spec fields the owned mode reads (-keep-spec). The heap of a
// ConfigMap is the owned mode's less this, so that a Load cached with
// more of its spec in owned mode is not counted as ConfigMap.
func (s *suite) ownedLoadsHeap(v string, n int) error {
	o := opts{namespace: namespace(v, "large"), mode: "noop", workers: s.cfg.workers, expect: n,
		leader: true, leaseName: s.leaseName("ownedloads-" + v), lease: s.cfg.stockLease}
	if framework(v) == opgen {
		o.extraFlags = []string{"-keep-spec"}
	}
	waitIdle()
	p, err := s.startOperator(v, o)
	if err != nil {
		return err
	}
	defer p.stop()
	if _, err := p.waitAll(s.cfg.scaled(3 * time.Minute)); err != nil {
		return err
	}
	time.Sleep(time.Second)
	st, err := p.stats(true)
	if err != nil {
		return err
	}
	s.res.add("heap.ownedloads.bytes", v, float64(st.HeapBytes))
	return nil
}
