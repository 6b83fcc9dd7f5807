package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/bench/internal/probe"
)

// window measures p over d after a warm-up: reconciles, status writes,
// CPU time and allocations.
type window struct {
	seconds    float64
	reconciles float64
	writes     float64
	// writeSeconds is the time the status writes took, summed: from
	// sending each to its response.
	writeSeconds float64
	cpu          float64
	allocs       float64
	allocBytes   float64
}

func measureWindow(p *proc, d time.Duration) (window, error) {
	st0, err := p.stats(false)
	if err != nil {
		return window{}, err
	}
	cpu0, t0 := p.cpu(), time.Now()
	time.Sleep(d)
	st1, err := p.stats(false)
	if err != nil {
		return window{}, err
	}
	cpu1, t1 := p.cpu(), time.Now()
	return window{
		seconds:      t1.Sub(t0).Seconds(),
		reconciles:   float64(st1.Reconciles - st0.Reconciles),
		writes:       float64(statusWrites(st1) - statusWrites(st0)),
		writeSeconds: float64(st1.WriteNanos[statusKey]-st0.WriteNanos[statusKey]) / 1e9,
		cpu:          (cpu1 - cpu0).Seconds(),
		allocs:       float64(st1.AllocObjects - st0.AllocObjects),
		allocBytes:   float64(st1.AllocBytes - st0.AllocBytes),
	}, nil
}

const statusKey = "PATCH loads/status"

func statusWrites(st probe.Stats) int64 { return st.Writes[statusKey] }

// benchThroughput runs the status-writing handler with every object asking
// to be reconciled again at once, at each worker count, and measures
// reconciles (each one status write) per second and CPU per 1,000.
func (s *suite) benchThroughput(ctx context.Context) error {
	raw, err := s.rawClient()
	if err != nil {
		return err
	}
	for _, w := range s.cfg.tpWorkers {
		key := fmt.Sprintf("throughput.w%d", w)
		for r := range s.cfg.tpRounds {
			for _, v := range order(r, append(s.variants(opgen, cr), watchedBound)...) {
				if v == watchedBound {
					// the bound of the same round: a client applying the
					// whole status while a typed watch decodes every event
					s.collectServerHeap()
					server0 := s.serverCPU()
					rate, err := writeRate(ctx, raw, watchedApply, w, s.cfg.small, s.cfg.window)
					if err != nil {
						return err
					}
					s.res.add(key+".writes", v, rate)
					s.res.add(key+".serverCPUPerWrite", v, (s.serverCPU()-server0).Seconds()/(rate*s.cfg.window.Seconds())*1000)
					continue
				}
				p, err := s.startOperator(v, opts{namespace: namespace(v, "small"), mode: "status", workers: w,
					requeue: time.Microsecond, expect: s.cfg.small})
				if err != nil {
					return err
				}
				_, err = p.waitAll(2 * time.Minute)
				if err == nil {
					time.Sleep(500 * time.Millisecond)
					s.collectServerHeap()
				}
				var m window
				server0 := s.serverCPU()
				if err == nil {
					m, err = s.measureWindowProfiled(p, s.cfg.window, fmt.Sprintf("status-%s-w%d-%d", v, w, r))
				}
				server := s.serverCPU() - server0
				p.stop()
				if err != nil {
					return err
				}
				s.res.add(key+".reconciles", v, m.reconciles/m.seconds)
				s.res.add(key+".writes", v, m.writes/m.seconds)
				if m.writes > 0 {
					s.res.add(key+".serverCPUPerWrite", v, server.Seconds()/m.writes*1000)
				}
				if m.reconciles > 0 {
					s.res.add(key+".cpuPer1000", v, m.cpu/m.reconciles*1000)
				}
				if m.writes > 0 && m.writeSeconds > 0 { // an older probe (a comparison's side A) times nothing
					// a worker's time per write: in the request, and the rest
					s.res.add(key+".requestMillis", v, m.writeSeconds/m.writes*1000)
					s.res.add(key+".besideMillis", v, (float64(w)*m.seconds-m.writeSeconds)/m.writes*1000)
				}
			}
		}
		for _, v := range s.variants(opgen, cr) {
			logf("   %s %d workers: %s reconciles/s, %s writes/s, %s CPU s/1000, the server's %s CPU ms a write; per write a worker spent %s ms in the request, %s ms beside it", v, w,
				fmtSeries(s.res.get(key+".reconciles", v)), fmtSeries(s.res.get(key+".writes", v)),
				fmtSeries(s.res.get(key+".cpuPer1000", v)), fmtSeries(s.res.get(key+".serverCPUPerWrite", v)),
				fmtSeries(s.res.get(key+".requestMillis", v)), fmtSeries(s.res.get(key+".besideMillis", v)))
		}
		logf("   the watched apply bound, %d writers: %s writes/s, the server's %s CPU ms a write", w,
			fmtSeries(s.res.get(key+".writes", watchedBound)), fmtSeries(s.res.get(key+".serverCPUPerWrite", watchedBound)))
	}
	return nil
}

// benchOverhead runs the no-op handler with every object asking to be
// reconciled again at once: what the framework costs per reconcile with no
// API call at all.
func (s *suite) benchOverhead(ctx context.Context) error {
	variants := s.variants(opgen, cr, crTuned)
	for r := range s.cfg.rounds {
		for _, v := range order(r, variants...) {
			p, err := s.startOperator(v, opts{namespace: namespace(v, "small"), mode: "noop", workers: s.cfg.workers,
				requeue: time.Microsecond, expect: s.cfg.small})
			if err != nil {
				return err
			}
			_, err = p.waitAll(2 * time.Minute)
			if err == nil {
				time.Sleep(500 * time.Millisecond)
			}
			var m window
			if err == nil {
				m, err = s.measureWindowProfiled(p, s.cfg.window, fmt.Sprintf("noop-%s-%d", v, r))
			}
			p.stop()
			if err != nil {
				return err
			}
			if m.reconciles == 0 {
				return fmt.Errorf("%s made no reconcile in the window", v)
			}
			s.res.add("noop.reconciles", v, m.reconciles/m.seconds)
			s.res.add("noop.cpuMicros", v, m.cpu/m.reconciles*1e6)
			s.res.add("noop.allocs", v, m.allocs/m.reconciles)
			s.res.add("noop.allocBytes", v, m.allocBytes/m.reconciles)
			s.res.add("noop.objectWrites", v, m.writes)
		}
	}
	for _, v := range variants {
		logf("   %s: %s reconciles/s, %s µs CPU, %s allocs, %s B per reconcile", v,
			fmtSeries(s.res.get("noop.reconciles", v)), fmtSeries(s.res.get("noop.cpuMicros", v)),
			fmtSeries(s.res.get("noop.allocs", v)), fmtSeries(s.res.get("noop.allocBytes", v)))
	}
	return nil
}

// benchLatency writes spec changes at a steady rate while the operator
// runs the status-writing handler, and measures the time from each write to
// the start of its reconcile, beside the time to its event on a bare watch
// in the same run.
func (s *suite) benchLatency(ctx context.Context) error {
	for r := range s.cfg.rounds {
		for _, v := range order(r, s.variants(opgen, cr)...) {
			if err := s.latencyOnce(ctx, v); err != nil {
				return err
			}
		}
	}
	for _, v := range s.variants(opgen, cr) {
		logf("   %s: p50 %s ms, p99 %s ms; bare watch p50 %s, p99 %s; p99 overhead %s ms", v,
			fmtSeries(s.res.get("latency.p50", v)), fmtSeries(s.res.get("latency.p99", v)),
			fmtSeries(s.res.get("latency.bare.p50", v)), fmtSeries(s.res.get("latency.bare.p99", v)),
			fmtSeries(s.res.get("latency.overhead.p99", v)))
	}
	return nil
}

func (s *suite) latencyOnce(ctx context.Context, v string) error {
	ns, group := namespace(v, "small"), groupOf(v)
	p, err := s.startOperator(v, opts{namespace: ns, mode: "status", workers: s.cfg.workers, expect: s.cfg.small, trace: true})
	if err != nil {
		return err
	}
	defer p.stop()
	if _, err := p.waitAll(2 * time.Minute); err != nil {
		return err
	}
	if err := waitSettled(p, 0, time.Second, time.Minute); err != nil {
		return err
	}
	w, stopWatch, err := s.watch(ctx, group, ns)
	if err != nil {
		return err
	}
	var sw specWriter
	err = sw.run(ctx, s.cfg.latencyRate, s.cfg.latencyFor, s.cfg.small, s.specPatcher(group, ns))
	time.Sleep(time.Second)
	stopWatch()
	if err != nil {
		return err
	}
	// A reconcile that falls behind the writes is not lost: wait for it, so
	// that its delay counts in the percentiles instead of stopping the run.
	recs := waitReconciled(p, sw.writes, 30*time.Second)
	w.mu.Lock()
	defer w.mu.Unlock()
	fw, missing := latencies(sw.writes, recs)
	bare, _ := latencies(sw.writes, w.events)
	if missing > len(sw.writes)/100 {
		return fmt.Errorf("%s: %d of %d writes had no reconcile of their generation or a later one within 30 s", v, missing, len(sw.writes))
	}
	if missing > 0 {
		logf("   %s: %d of %d writes had no reconcile of their generation or a later one within 30 s", v, missing, len(sw.writes))
	}
	ms := func(x float64) float64 { return x * 1000 }
	s.res.add("latency.p50", v, ms(percentile(fw, 50)))
	s.res.add("latency.p99", v, ms(percentile(fw, 99)))
	s.res.add("latency.bare.p50", v, ms(percentile(bare, 50)))
	s.res.add("latency.bare.p99", v, ms(percentile(bare, 99)))
	s.res.add("latency.overhead.p50", v, ms(percentile(fw, 50)-percentile(bare, 50)))
	s.res.add("latency.overhead.p99", v, ms(percentile(fw, 99)-percentile(bare, 99)))
	s.res.add("latency.samples", v, float64(len(fw)))
	return nil
}

// waitReconciled returns the first reconcile of each generation p traced,
// once every write has one of its generation or a later one, or after
// limit.
func waitReconciled(p *proc, writes []rec, limit time.Duration) firsts {
	deadline := time.Now().Add(limit)
	for logged := false; ; {
		recs := firsts{}
		for _, rc := range p.traces() {
			recs.add(rc.name, rc.gen, rc.t)
		}
		n := recs.unhandled(writes)
		if n == 0 || time.Now().After(deadline) {
			return recs
		}
		if !logged {
			logf("   %s: waiting up to %v for the reconciles of %d of %d writes", p.variant, limit, n, len(writes))
			logged = true
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// measureWindowProfiled is measureWindow with, when BENCH_CPU_PROFILES
// names a directory, CPU profiles of the window saved there: the
// operator's as name.pprof, the API server's as name-apiserver.pprof.
func (s *suite) measureWindowProfiled(p *proc, d time.Duration, name string) (window, error) {
	dir := os.Getenv("BENCH_CPU_PROFILES")
	if dir == "" {
		return measureWindow(p, d)
	}
	var wg sync.WaitGroup
	wg.Go(func() { saveCPUProfile(p, d, filepath.Join(dir, name+".pprof")) })
	wg.Go(func() { s.saveAPIServerProfile(d, filepath.Join(dir, name+"-apiserver.pprof")) })
	defer wg.Wait()
	return measureWindow(p, d)
}

// saveAPIServerProfile saves a CPU profile of the API server over d at
// path (its /debug/pprof: startCluster turns profiling on for
// BENCH_CPU_PROFILES, testenv leaves it off).
func (s *suite) saveAPIServerProfile(d time.Duration, path string) {
	cfg := s.adminConfig()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		logf("   API server CPU profile: %v", err)
		return
	}
	saveProfile(hc, cpuProfileURL(cfg.Host, d), path, "API server CPU profile")
}

// saveCPUProfile writes a CPU profile of p's first d to path, for
// investigation (BENCH_CPU_PROFILES=dir: the restarts of the owned
// benchmark, and the windows of measureWindowProfiled).
func saveCPUProfile(p *proc, d time.Duration, path string) {
	saveProfile(http.DefaultClient, cpuProfileURL("http://"+p.addr, d), path, "CPU profile")
}

// cpuProfileURL is the address of base's pprof CPU profile over d.
func cpuProfileURL(base string, d time.Duration) string {
	return fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, int(d.Seconds()))
}

// saveProfile gets the pprof profile at url with hc and writes it at path;
// a failure is logged under what, and nothing is saved.
func saveProfile(hc *http.Client, url, path, what string) {
	data, err := getOK(hc, url)
	if err == nil {
		err = os.WriteFile(path, data, 0o644)
	}
	if err != nil {
		logf("   %s: %v", what, err)
	}
}

// getOK gets url with hc and returns the body of a 200 response.
func getOK(hc *http.Client, url string) ([]byte, error) {
	resp, err := hc.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(data))
	}
	return data, nil
}

// collectServerHeap has the API server collect its heap (runtime.GC, by
// its /debug/pprof/heap?gc=1) before a window of the throughput rounds.
// The server holds every object of the suite in its watch cache, a heap
// of gigabytes that takes seconds of CPU to mark; without this a window
// pays for the garbage the windows before it left whenever a collection
// falls into it, which doubled the server's CPU per write in a third of
// the windows of either framework. After it, a window's writes alone
// decide whether a collection falls into it.
func (s *suite) collectServerHeap() {
	cfg := s.adminConfig()
	hc, err := rest.HTTPClientFor(cfg)
	if err == nil {
		_, err = getOK(hc, cfg.Host+"/debug/pprof/heap?gc=1")
	}
	if err != nil {
		logf("   the API server's heap was not collected before the window: %v", err)
	}
}

// watchedBound is the variant of the throughput rounds that is no
// operator: the watched apply bound (raw.go), measured in each round
// between the operators so that it shares their moment of the machine.
const watchedBound = "watched apply"

// serverCPU is the CPU time etcd and kube-apiserver have used so far.
func (s *suite) serverCPU() time.Duration {
	var total time.Duration
	for _, pid := range s.env.PIDs() {
		total += pidCPU(pid)
	}
	return total
}
