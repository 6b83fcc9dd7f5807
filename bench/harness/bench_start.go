package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/bench/internal/probe"
	"github.com/opgen-sdk/opgen/bench/pkg/generated/clientset/versioned"
)

// benchRaw measures the bounds of this machine with a plain client-go
// program: status writes per second by concurrency and patch type, the
// latency from a write to its watch event, and paged list + decode.
func (s *suite) benchRaw(ctx context.Context) error {
	return s.measureRaw(ctx, s.fullRawPlan())
}

// rawPlan is which raw bounds a run measures: status writes at some
// concurrencies and patch types, paged lists of some sizes, and the bare
// watch's latency.
type rawPlan struct {
	concurrency []int
	kinds       []string
	lists       []string
	watch       bool
}

func (p rawPlan) empty() bool { return len(p.concurrency) == 0 && len(p.lists) == 0 && !p.watch }

// fullRawPlan is the raw benchmark of a full run.
func (s *suite) fullRawPlan() rawPlan {
	p := rawPlan{concurrency: []int{1, 2, 4, 8, 16}, kinds: []string{mergePatch, applyPatch, watchedApply}, lists: []string{"small"}, watch: true}
	if s.cfg.runs("coldstart") || s.cfg.runs("owned") {
		p.lists = append(p.lists, "large")
	}
	return p
}

// rawPlan is what this run measures of the raw bounds: all of them when
// it runs the raw benchmark, else those its rows are judged against or
// shown beside (a partial run, -only throughput, must not judge against a
// bound it did not measure).
func (s *suite) rawPlan() rawPlan {
	if s.cfg.runs("raw") {
		return s.fullRawPlan()
	}
	return planOf(s.rawKeys())
}

// rawKeys returns the raw bounds that the rows of this run's benchmarks
// are judged against (the targets, or a comparison's rows) or shown
// beside (the throughput table's merge and watched apply bounds).
func (s *suite) rawKeys() []string {
	var keys []string
	add := func(bench, key string) {
		if s.cfg.runs(bench) && !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	if s.cfg.comparing() {
		for _, r := range s.compareRows() {
			if r.raw != "" {
				add(r.bench, r.raw)
			}
		}
		return keys
	}
	for _, c := range s.checks() {
		if c.raw != "" {
			add(c.bench, c.raw)
		}
	}
	for _, w := range s.cfg.tpWorkers {
		add("throughput", rawWrites(mergePatch, w))
		add("throughput", rawWrites(watchedApply, w))
	}
	return keys
}

// planOf turns raw bound names (writes.<kind>.c<n>, list.<size>.seconds)
// into what to measure.
func planOf(keys []string) rawPlan {
	var p rawPlan
	for _, k := range keys {
		f := strings.Split(k, ".")
		switch {
		case len(f) == 3 && f[0] == "writes":
			n, err := strconv.Atoi(strings.TrimPrefix(f[2], "c"))
			if err != nil {
				continue
			}
			if !slices.Contains(p.concurrency, n) {
				p.concurrency = append(p.concurrency, n)
			}
			if !slices.Contains(p.kinds, f[1]) {
				p.kinds = append(p.kinds, f[1])
			}
		case len(f) == 3 && f[0] == "list" && f[2] == "seconds":
			if !slices.Contains(p.lists, f[1]) {
				p.lists = append(p.lists, f[1])
			}
		}
	}
	slices.Sort(p.concurrency)
	slices.Sort(p.kinds) // a fixed order; order() rotates it by round
	return p
}

// measureRaw measures the raw bounds of plan.
func (s *suite) measureRaw(ctx context.Context, plan rawPlan) error {
	cs, err := s.rawClient()
	if err != nil {
		return err
	}
	for r := range s.cfg.rawRounds {
		for _, c := range plan.concurrency {
			for _, kind := range order(r+c, plan.kinds...) {
				rate, err := writeRate(ctx, cs, kind, c, s.cfg.small, s.cfg.rawWindow)
				if err != nil {
					return err
				}
				s.res.Raw[rawWrites(kind, c)] = append(s.res.Raw[rawWrites(kind, c)], rate)
			}
		}
		for _, size := range plan.lists {
			if err := s.rawList(ctx, cs, size); err != nil {
				return err
			}
		}
	}
	for range s.cfg.rawRounds {
		if !plan.watch {
			break
		}
		lat, missing, err := s.bareWatchLatency(ctx, opgenGroup, rawNamespace, s.cfg.small)
		if err != nil {
			return err
		}
		s.res.Raw["watch.p50"] = append(s.res.Raw["watch.p50"], percentile(lat, 50))
		s.res.Raw["watch.p99"] = append(s.res.Raw["watch.p99"], percentile(lat, 99))
		if missing > 0 {
			logf("   %d writes had no watch event", missing)
		}
	}
	logf("   raw: %v", s.res.Raw)
	return nil
}

func rawWrites(kind string, c int) string { return fmt.Sprintf("writes.%s.c%d", kind, c) }

// bareWatchLatency writes spec changes at the latency benchmark's rate and
// measures the time from each write to its watch event.
func (s *suite) bareWatchLatency(ctx context.Context, group, ns string, n int) ([]float64, int, error) {
	w, stop, err := s.watch(ctx, group, ns)
	if err != nil {
		return nil, 0, err
	}
	var sw specWriter
	err = sw.run(ctx, s.cfg.latencyRate, s.cfg.latencyFor/2, n, s.specPatcher(group, ns))
	time.Sleep(500 * time.Millisecond)
	stop()
	if err != nil {
		return nil, 0, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	lat, missing := latencies(sw.writes, w.events)
	return lat, missing, nil
}

// watch follows the Loads of ns from now on.
func (s *suite) watch(ctx context.Context, group, ns string) (*watcher, func(), error) {
	res := s.dyn.Resource(gvr(group)).Namespace(ns)
	l, err := res.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, nil, err
	}
	wi, err := res.Watch(ctx, metav1.ListOptions{ResourceVersion: l.GetResourceVersion()})
	if err != nil {
		return nil, nil, err
	}
	w := &watcher{events: firsts{}}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { w.follow(wctx, wi); close(done) }()
	return w, func() { cancel(); <-done }, nil
}

// specPatcher patches the spec of a Load and returns its new generation.
func (s *suite) specPatcher(group, ns string) func(ctx context.Context, name string, body []byte) (int64, error) {
	res := s.dyn.Resource(gvr(group)).Namespace(ns)
	return func(ctx context.Context, name string, body []byte) (int64, error) {
		u, err := res.Patch(ctx, name, "application/merge-patch+json", body, metav1.PatchOptions{})
		if err != nil {
			return 0, err
		}
		return u.GetGeneration(), nil
	}
}

// leaseName makes lease names unique, so that no run waits for a lease a
// previous run did not release. Names are lower case (the sides of a
// comparison are A and B).
func (s *suite) leaseName(prefix string) string {
	s.procSeq++
	return fmt.Sprintf("%s-%d", strings.ToLower(prefix), s.procSeq)
}

// benchColdStart measures, for the small and the large object count, the
// time from process start to every object reconciled once by a no-op
// handler, the peak RSS, and (large N) the Go heap after GC, with an
// empty-namespace baseline for the memory per object.
func (s *suite) benchColdStart(ctx context.Context) error {
	variants := s.variants(opgen, cr, crTuned)
	cs, err := s.rawClient()
	if err != nil {
		return err
	}
	plain, err := s.plainClient()
	if err != nil {
		return err
	}
	for _, size := range []string{"small", "large"} {
		n := s.sizeN(size)
		for r := range s.cfg.rounds {
			// The bound of this round: the paged list + decode of the
			// same objects, just before the operators start, the faster
			// of gzip (client-go's default) and no compression.
			d, err := fastest(ctx, listDecode, namespace(s.primary(), size), n, cs, plain)
			if err != nil {
				return err
			}
			key := roundBound("list." + size + ".seconds")
			s.res.Raw[key] = append(s.res.Raw[key], d.Seconds())
			// Beside it, not judged: the same objects as a streamed
			// list, the request the operators make, read as client-go
			// decodes it and as bytes alone (what the server's stream
			// takes by itself).
			for _, st := range []struct {
				key  string
				read func(context.Context, versioned.Interface, string) (time.Duration, int, error)
			}{{"stream", streamDecode}, {"streamread", streamRead}} {
				if d, err = fastest(ctx, st.read, namespace(s.primary(), size), n, cs, plain); err != nil {
					return fmt.Errorf("the streamed list of the %s objects: %w", size, err)
				}
				key = roundBound(st.key + "." + size + ".seconds")
				s.res.Raw[key] = append(s.res.Raw[key], d.Seconds())
			}
			for _, v := range order(r, variants...) {
				if err := s.coldStartOnce(ctx, v, size, n); err != nil {
					return err
				}
			}
			if size != "large" {
				continue
			}
			for _, v := range order(r, variants...) {
				if err := s.emptyBaseline(v); err != nil {
					return err
				}
			}
		}
		for _, v := range variants {
			logf("   %s N=%d: cold start %v s, peak RSS %v", v, n, fmtSeries(s.res.get("coldstart."+size+".seconds", v)), fmtSeries(s.res.get("peakrss."+size+".bytes", v)))
		}
	}
	for _, v := range variants {
		full, empty := s.res.get("heap.large.bytes", v), s.res.get("heap.empty.bytes", v)
		for i := range min(len(full), len(empty)) {
			s.res.add("heap.perobject.bytes", v, (full[i]-empty[i])/float64(s.cfg.large))
		}
		logf("   %s heap per object %v", v, fmtSeries(s.res.get("heap.perobject.bytes", v)))
	}
	return nil
}

// saveHeapProfile writes p's heap profile to path, for investigation
// (BENCH_HEAP_PROFILES=dir).
func saveHeapProfile(p *proc, path string) {
	saveProfile(http.DefaultClient, "http://"+p.addr+"/debug/pprof/heap?gc=1", path, "heap profile")
}

func (s *suite) sizeN(size string) int {
	if size == "large" {
		return s.cfg.large
	}
	return s.cfg.small
}

// startMarks are the phases of a start the opgen operator marks (see
// bench/operator/opgen), in the order they come.
var startMarks = []string{"watch", "listed", "synced", "leading"}

func (s *suite) coldStartOnce(ctx context.Context, v, size string, n int) error {
	waitIdle()
	p, err := s.startOperator(v, opts{
		namespace: namespace(v, size), mode: "noop", workers: s.cfg.workers, expect: n,
		leader: true, leaseName: s.leaseName("cold-" + v), lease: s.cfg.stockLease,
	})
	if err != nil {
		return err
	}
	defer p.stop()
	if dir := os.Getenv(probe.EnvStartProfiles); dir != "" && size == "large" {
		// The API server's side of the same start (the operator's is
		// its own, to the "all" line), done before the next start.
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Go(func() {
			s.saveAPIServerProfile(3*time.Second, filepath.Join(dir, fmt.Sprintf("start-%s-%s-apiserver.pprof", v, size)))
		})
	}
	all, err := p.waitAll(s.cfg.scaled(3 * time.Minute))
	if err != nil {
		return err
	}
	s.res.add("coldstart."+size+".seconds", v, all.Sub(p.start).Seconds())
	// The operator's own CPU to that point: what its start costs,
	// steadier than the wall time, which it shares with the API server.
	s.res.add("coldstart."+size+".cpu.seconds", v, p.cpu().Seconds())
	p.mu.Lock()
	for _, m := range startMarks {
		if t, ok := p.marks[m]; ok {
			s.res.add("coldstart."+size+".mark."+m+".seconds", v, t.Sub(p.start).Seconds())
		}
	}
	p.mu.Unlock()
	time.Sleep(time.Second)
	s.addMemory(p, v, size)
	st, err := p.stats(true)
	if err != nil {
		return err
	}
	s.res.add("heap."+size+".bytes", v, float64(st.HeapBytes))
	if dir := os.Getenv("BENCH_HEAP_PROFILES"); dir != "" {
		saveHeapProfile(p, filepath.Join(dir, fmt.Sprintf("%s-%s.pprof", v, size)))
	}
	if w := objectWrites(st.Writes); w > 0 {
		logf("   note: %s made %d object writes during a no-op cold start", v, w)
	}
	return nil
}

// emptyBaseline measures the heap of an operator whose namespace is empty,
// once its caches had time to sync.
func (s *suite) emptyBaseline(v string) error {
	p, err := s.startOperator(v, opts{namespace: namespace(v, "empty"), mode: "noop", workers: s.cfg.workers,
		leader: true, leaseName: s.leaseName("empty-" + v), lease: s.cfg.stockLease})
	if err != nil {
		return err
	}
	defer p.stop()
	time.Sleep(3 * time.Second)
	s.addMemory(p, v, "empty")
	st, err := p.stats(true)
	if err != nil {
		return err
	}
	s.res.add("heap.empty.bytes", v, float64(st.HeapBytes))
	return nil
}

// addMemory records p's peak RSS, the file-backed part of its RSS (mostly
// the pages of its binary: as large for any operator that links client-go's
// clientsets, which bring all of k8s.io/api) and the peak less that part,
// which is what the framework's own memory decides.
func (s *suite) addMemory(p *proc, v, size string) {
	peak, file := p.memory()
	s.res.add("peakrss."+size+".bytes", v, peak)
	s.res.add("rssfile."+size+".bytes", v, file)
	s.res.add("peakanon."+size+".bytes", v, peak-file)
}

// objectWrites sums the writes to Loads and ConfigMaps (not leases or
// events).
func objectWrites(w map[string]int64) int64 {
	var n int64
	for k, v := range w {
		if isObjectWrite(k) {
			n += v
		}
	}
	return n
}

func isObjectWrite(key string) bool {
	_, res, _ := cut(key)
	return res == "loads" || res == "loads/status" || res == "configmaps"
}

func cut(key string) (verb, resource string, ok bool) {
	for i := range len(key) {
		if key[i] == ' ' {
			return key[:i], key[i+1:], true
		}
	}
	return key, "", false
}

// waitSettled waits until p made no write and no reconcile for quiet,
// after at least minWrites object writes.
func waitSettled(p *proc, minWrites int64, quiet, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last probeSnapshot
	since := time.Now()
	for time.Now().Before(deadline) {
		st, err := p.stats(false)
		if err != nil {
			return err
		}
		cur := probeSnapshot{writes: objectWrites(st.Writes), reconciles: st.Reconciles}
		if cur != last {
			last, since = cur, time.Now()
		} else if time.Since(since) >= quiet && cur.writes >= minWrites {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s did not settle within %v (object writes %d of at least %d)", p.variant, timeout, last.writes, minWrites)
}

type probeSnapshot struct{ writes, reconciles int64 }

func fmtSeries(v []float64) string {
	sm, ok := summarize(v)
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.4g [%.4g–%.4g]", sm.med, sm.min, sm.max)
}
