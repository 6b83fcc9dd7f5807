package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// markdown is the run's report; base is the name of its files, charted
// whether a chart was written beside it.
func (s *suite) markdown(evs []evaluated, base string, charted bool) string {
	var b strings.Builder
	r := s.res
	mode := "full"
	if len(s.cfg.only) > 0 {
		mode = "partial (`-only " + strings.Join(slices.Sorted(maps.Keys(s.cfg.only)), ",") + "`)"
	}
	if s.cfg.quick {
		mode = "quick (development: small N, few rounds; not for quoting)"
	}
	fmt.Fprintf(&b, "# opgen and controller-runtime side by side, %s\n\n", r.Date)
	fmt.Fprintf(&b, "Written by `make bench` (`cd bench && go run ./harness`), %s run", mode)
	if c := r.Commit; c != nil {
		fmt.Fprintf(&b, " of %s", c.label())
	}
	fmt.Fprintf(&b, ". Raw numbers: [%s.json](%s.json)", base, base)
	if charted {
		fmt.Fprintf(&b, "; chart: [%s.png](%s.png)", base, base)
	}
	b.WriteString(".\n\n")
	fmt.Fprintf(&b, "Machine: %s CPUs, %s memory, %s; load average %s at the start, %s at the end (other work shared the machine). ",
		r.Machine["cpus"], r.Machine["memTotal"], r.Machine["go"], r.Machine["loadavgAtStart"], r.Machine["loadavgAtEnd"])
	tmpfs := "on disk"
	if s.tmpfs {
		tmpfs = "on tmpfs (/dev/shm)"
	}
	fmt.Fprintf(&b, "One etcd + kube-apiserver (v1.37.1, etcd %s, `--unsafe-no-fsync`) for everything; the suite took %.1f min.\n\n", tmpfs, r.Total/60)
	fmt.Fprintf(&b, "Every value is the median over %d rounds with [min–max]; the variants alternate within each round and the order rotates from round to round. ", s.cfg.rounds)
	b.WriteString("Ratios are opgen / controller-runtime taken round by round (values of the same round), then the median [min–max] of those ratios.\n\n")
	b.WriteString("Variants: **opgen** (pkg/runtime defaults: managedFields stripped, owned kinds metadata-only; its cache keeps of a Load's spec only what the handler reads, `+opgen:controller:cacheSpec=image;replicas;config` in owned mode and nothing in the others); **cr**: controller-runtime v0.25.2, stock manager; **cr tuned**: the same with `cache.Options{DefaultTransform: cache.TransformStripManagedFields()}` and `LeaderElectionReleaseOnCancel: true`. ")
	fmt.Fprintf(&b, "Equal for all: %d workers unless a row says otherwise, client QPS %d / burst %d (not the bottleneck), WatchListClient %v (client-go's default), one namespace each (separate API groups `%s` and `%s`, same Go types and CRD schema).", s.cfg.workers, s.cfg.qps, s.cfg.burst, s.cfg.watchList, opgenGroup, crGroup)
	if ob := r.ObjectBytes; ob != nil {
		fmt.Fprintf(&b, " Objects: %.0f B of JSON each (%.0f B without managedFields; two field managers).", ob["withManagedFields"], ob["withoutManagedFields"])
	}
	b.WriteString("\n\n")

	b.WriteString("## Targets\n\n")
	t := &table{}
	t.head("target (opgen / controller-runtime unless absolute)", "measured", "target", "met")
	for _, e := range evs {
		t.row(e.name, e.valueText(), e.targetText(), e.metText())
	}
	b.WriteString(t.b.String())
	b.WriteString("\n")

	s.mdRaw(&b)
	s.mdColdStart(&b)
	s.mdMemory(&b)
	s.mdThroughput(&b)
	s.mdOverhead(&b)
	s.mdLatency(&b)
	s.mdSteady(&b)
	s.mdFailover(&b)
	s.mdWebhook(&b)
	s.mdShard(&b)
	s.mdCodegen(&b)
	s.mdBinary(&b)
	s.mdTestkit(&b)

	if len(r.Errors) > 0 {
		b.WriteString("## Errors\n\nThese parts of the run failed; their rows above are missing or partial.\n\n")
		for _, e := range r.Errors {
			fmt.Fprintf(&b, "- %s\n", strings.ReplaceAll(e, "\n", " "))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Phases\n\n")
	t = &table{}
	t.head("phase", "seconds")
	for _, p := range r.Phases {
		t.row(p.Name, fmt.Sprintf("%.0f", p.Seconds))
	}
	b.WriteString(t.b.String())
	return b.String()
}

// compare writes rows of metrics for opgen, cr and cr tuned with the
// ratios opgen / cr and opgen / cr tuned.
func (s *suite) compare(b *strings.Builder, rows [][3]string, scale map[string]float64) {
	t := &table{}
	t.head("measurement", "opgen", "cr", "cr tuned", "opgen / cr", "opgen / cr tuned")
	for _, r := range rows {
		label, metric, unit := r[0], r[1], r[2]
		sc := scale[unit]
		if sc == 0 {
			sc = 1
		}
		t.row(label+" ("+unit+")", s.cell(metric, opgen, sc), s.cell(metric, cr, sc), s.cell(metric, crTuned, sc),
			s.ratioCell(metric, opgen, cr), s.ratioCell(metric, opgen, crTuned))
	}
	b.WriteString(t.b.String())
	b.WriteString("\n")
}

var units = map[string]float64{"s": 1, "MiB": mib, "KiB": kib, "B": 1, "ms": 1, "µs": 1, "/s": 1, "/min": 1, "allocs": 1, "CPU s": 1}

func (s *suite) mdRaw(b *strings.Builder) {
	raw := s.res.Raw
	var conc []int
	for _, c := range []int{1, 2, 4, 8, 16} {
		if len(raw[rawWrites(mergePatch, c)])+len(raw[rawWrites(applyPatch, c)])+len(raw[rawWrites(watchedApply, c)]) > 0 {
			conc = append(conc, c)
		}
	}
	if len(conc) == 0 && len(raw["list.small.seconds"]) == 0 && len(raw["list.large.seconds"]) == 0 {
		return
	}
	b.WriteString("## Physical bounds: a raw client-go program\n\n")
	if !s.cfg.runs("raw") {
		b.WriteString("This run did not run the raw benchmark; it measured the bounds its rows are judged against or shown beside, below.\n\n")
	}
	if len(conc) > 0 {
		kinds := "a JSON merge patch of two fields (what controller-runtime's `client.MergeFrom` sends) and a server-side apply of the whole status with force (what opgen's ApplyStatus sends when a list of the status changed)"
		if !slices.ContainsFunc(conc, func(c int) bool { return len(raw[rawWrites(mergePatch, c)]) > 0 }) {
			kinds = "a server-side apply of the whole status with force (what opgen's ApplyStatus sends when a list of the status changed; the merge patch was not measured, no row of this run is judged against it)"
		}
		fmt.Fprintf(b, "Status writes per second to %d objects, each writer on its own objects (median of %d rounds of %v): %s. The watched apply is the same apply while a typed watch of the namespace receives and decodes every write's event, as an operator's watch does; the throughput benchmark measures it again in each of its rounds and judges the operators' status writes against that.\n\n", s.cfg.small, s.cfg.rawRounds, s.cfg.rawWindow, kinds)
		t := &table{}
		t.head("concurrency", "merge patch (/s)", "server-side apply (/s)", "apply / merge", "watched apply (/s)", "watched / apply")
		for _, c := range conc {
			m, a, w := raw[rawWrites(mergePatch, c)], raw[rawWrites(applyPatch, c)], raw[rawWrites(watchedApply, c)]
			t.row(fmt.Sprint(c), rawCell(m, 1), rawCell(a, 1), medianRatio(a, m), rawCell(w, 1), medianRatio(w, a))
		}
		b.WriteString(t.b.String())
		b.WriteString("\n")
	}
	if len(raw["watch.p50"]) > 0 {
		fmt.Fprintf(b, "Write-to-watch-event latency (a spec merge patch at %g/s, from sending the PATCH to the event on a watch of the namespace): p50 %s ms, p99 %s ms.\n\n",
			s.cfg.latencyRate, rawCell(raw["watch.p50"], 1000), rawCell(raw["watch.p99"], 1000))
	}
	for _, size := range []string{"small", "large"} {
		if v := raw["list."+size+".seconds"]; len(v) > 0 {
			n := raw["list."+size+".objects"][0]
			fmt.Fprintf(b, "Paged list (500 a page) + decode into typed objects, %.0f objects: %s s (%s µs per object).\n\n", n, rawCell(v, 1), num(median(v)/n*1e6))
			if p := raw["list."+size+".plain.seconds"]; len(p) > 0 {
				fmt.Fprintf(b, "The same asking for no compression (client-go's `DisableCompression`; by default the API server gzips a page over 128 KiB), %.0f objects: %s s (%s µs per object).\n\n", n, rawCell(p, 1), num(median(p)/n*1e6))
			}
			if c := raw["list."+size+".cbor.seconds"]; len(c) > 0 {
				fmt.Fprintf(b, "The same over CBOR (`-cbor`: KEP-4222, alpha and off by default in Kubernetes 1.37, both gates turned on for this row), %.0f objects: %s s (%s µs per object).\n\n", n, rawCell(c, 1), num(median(c)/n*1e6))
			}
		}
	}
}

func (s *suite) mdColdStart(b *strings.Builder) {
	if len(s.res.Metrics["coldstart.small.seconds"]) == 0 {
		return
	}
	b.WriteString("## 1. Cold start\n\n")
	b.WriteString("From process start (the harness's clock before exec) to the moment the handler had run once for every object, with a no-op handler (controller-runtime's reads the object from the cache). The objects are already handled (status.observedGeneration = generation), so opgen's pipeline writes nothing either: both make zero API writes. Leader election on, each run with a fresh Lease. Peak RSS is VmHWM read after every object was reconciled; file-backed is RssFile read at the same moment (the pages of the binary and its libraries in memory, about as many for any operator linking client-go's clientsets), and the rows below it the peak less those pages.\n\n")
	for _, size := range []string{"small", "large"} {
		if v := s.res.Raw[roundBound("list."+size+".seconds")]; len(v) > 0 {
			fmt.Fprintf(b, "The bound of N=%d, a paged list (500 a page) + decode of the same objects measured in each round just before the operators start, the faster of gzip (client-go's default) and no compression (the rows \"of the raw paged list\" divide round by round): %s s.\n\n", s.sizeN(size), fmtSeries(v))
			st, sr := s.res.Raw[roundBound("stream."+size+".seconds")], s.res.Raw[roundBound("streamread."+size+".seconds")]
			if len(st) > 0 && len(sr) > 0 {
				fmt.Fprintf(b, "Beside it, not judged, the same objects as a streamed list (a watch with sendInitialEvents, what both operators ask for with client-go's WatchListClient on, from the request to the bookmark that ends the initial events), the faster of gzip and none again: through the generated clientset's watch, which decodes every event, %s s, %s of the paged list round by round; read as bytes and not decoded, what the API server takes to send it, %s s, %s of the paged list.\n\n", fmtSeries(st), ratioSeries(ratios(st, v)), fmtSeries(sr), ratioSeries(ratios(sr, v)))
			}
		}
	}
	s.compare(b, [][3]string{
		{fmt.Sprintf("cold start, N=%d", s.cfg.small), "coldstart.small.seconds", "s"},
		{fmt.Sprintf("cold start, N=%d", s.cfg.large), "coldstart.large.seconds", "s"},
		{fmt.Sprintf("operator CPU to all handled, N=%d", s.cfg.small), "coldstart.small.cpu.seconds", "CPU s"},
		{fmt.Sprintf("operator CPU to all handled, N=%d", s.cfg.large), "coldstart.large.cpu.seconds", "CPU s"},
		{fmt.Sprintf("peak RSS, N=%d", s.cfg.small), "peakrss.small.bytes", "MiB"},
		{fmt.Sprintf("peak RSS, N=%d", s.cfg.large), "peakrss.large.bytes", "MiB"},
		{"peak RSS, empty namespace", "peakrss.empty.bytes", "MiB"},
		{"file-backed RSS, empty namespace", "rssfile.empty.bytes", "MiB"},
		{fmt.Sprintf("peak RSS less file-backed, N=%d", s.cfg.small), "peakanon.small.bytes", "MiB"},
		{fmt.Sprintf("peak RSS less file-backed, N=%d", s.cfg.large), "peakanon.large.bytes", "MiB"},
		{"peak RSS less file-backed, empty namespace", "peakanon.empty.bytes", "MiB"},
	}, units)
	s.mdStartMarks(b)
}

// ratioSeries formats the median and range of per-round ratios.
func ratioSeries(v []float64) string {
	sm, ok := summarize(v)
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%.2fx [%.2f–%.2f]", sm.med, sm.min, sm.max)
}

// mdStartMarks shows where opgen's cold start went: the moments its
// telemetry marked, from the same clock as the cold start.
func (s *suite) mdStartMarks(b *strings.Builder) {
	if len(s.res.get("coldstart.large.mark.listed.seconds", opgen)) == 0 {
		return
	}
	b.WriteString("\nWhere opgen's start went, seconds from the same clock as the cold start (not judged): its Load watch opened; the initial list arrived (a streamed list's initial-events-end bookmark); its cache synced (the informer had handed every listed object to the queue); its workers started, the lease won (telemetry.LeaderAcquired, which the runtime reports as they start); every object handled (the cold start row).\n\n")
	t := &table{}
	t.head("moment", fmt.Sprintf("N=%d", s.cfg.small), fmt.Sprintf("N=%d", s.cfg.large))
	for _, m := range []struct{ key, name string }{
		{"mark.watch", "watch opened"}, {"mark.listed", "initial list arrived"}, {"mark.synced", "cache synced"},
		{"mark.leading", "workers started, lease won"}, {"", "every object handled"},
	} {
		cells := []string{m.name}
		for _, size := range []string{"small", "large"} {
			metric := "coldstart." + size + ".seconds"
			if m.key != "" {
				metric = "coldstart." + size + "." + m.key + ".seconds"
			}
			cells = append(cells, s.cell(metric, opgen, 1))
		}
		t.row(cells...)
	}
	b.WriteString(t.b.String())
	b.WriteString("\n")
}

func (s *suite) mdMemory(b *strings.Builder) {
	if len(s.res.Metrics["heap.large.bytes"]) == 0 && len(s.res.Metrics["heap.owned.bytes"]) == 0 {
		return
	}
	b.WriteString("## 2. Memory in steady state\n\n")
	fmt.Fprintf(b, "Go heap after a forced GC (`runtime.GC` twice and `debug.FreeOSMemory`, then `/memory/classes/heap/objects:bytes`), once every object was reconciled. Per object: (heap with N=%d − heap of the same operator over an empty namespace) / N, round by round. Owned: each Load owns one ConfigMap (%d ConfigMaps), the operators restarted over objects and ConfigMaps that already match, so they write nothing. A ConfigMap's heap is the owned mode's less that of the same Loads under the no-op handler, with opgen's cache keeping the spec fields the owned mode reads (`-keep-spec`; the no-op mode's own cache keeps none), in the same round.\n\n", s.cfg.large, s.cfg.large)
	s.compare(b, [][3]string{
		{"heap, empty namespace", "heap.empty.bytes", "MiB"},
		{fmt.Sprintf("heap, %d Loads", s.cfg.large), "heap.large.bytes", "MiB"},
		{"heap per cached Load", "heap.perobject.bytes", "B"},
		{fmt.Sprintf("heap, %d Loads + %d owned ConfigMaps", s.cfg.large, s.cfg.large), "heap.owned.bytes", "MiB"},
		{"heap per Load + its ConfigMap", "heap.owned.perobject.bytes", "B"},
		{"heap per Load as the owned mode caches it", "heap.ownedloads.perobject.bytes", "B"},
		{"heap per owned ConfigMap", "heap.perconfigmap.bytes", "B"},
		{"peak RSS, owned", "peakrss.owned.bytes", "MiB"},
		{"start to all reconciled, owned", "coldstart.owned.seconds", "s"},
		{"object writes on restart, owned", "owned.writes", "allocs"},
	}, units)
	if len(s.res.Metrics["userchange.seconds"]) > 0 {
		fmt.Fprintf(b, "\nA change made during the cold start of %d objects: as soon as the operator reconciled its first object, %d objects it had not reconciled yet got a spec change, one every 50ms; the latency is from each patch to the first reconcile of its generation, the median of a round. controller-runtime runs with its priority queue (on by default). Once every object was reconciled, %d more objects got the same change: that latency is the floor (the patch, the watch event, one reconcile) with no queue to wait in. The third row is the first minus the floor, round by round: what waiting in the queue during the cold start added. The fourth is the first change of each round alone, made as the first reconcile ran: what a change waits when the work has just started.\n\n", s.cfg.large, userChanges, userChanges)
		s.compare(b, [][3]string{
			{"a change during the cold start, latency", "userchange.seconds", "s"},
			{"the same change once idle, latency", "userchange.idle.seconds", "s"},
			{"added by the cold start", "userchange.excess.seconds", "s"},
			{"the first change, made as the work starts", "userchange.first.seconds", "s"},
		}, units)
	}
}

func (s *suite) mdThroughput(b *strings.Builder) {
	if len(s.res.Metrics["throughput.w1.reconciles"]) == 0 {
		return
	}
	b.WriteString("## 3. Write-bound throughput\n\n")
	fmt.Fprintf(b, "Each reconcile reads the object from the cache and writes its status (a new status.heartbeat, so every reconcile is one write) and asks to be reconciled again at once (RequeueAfter 1µs); %d objects, measured over %v after every object was reconciled once. Both write a JSON merge patch of the changed field: opgen's ApplyStatus sends one for a status change that changes no list (a changed list goes by server-side apply), controller-runtime's `client.MergeFrom` always. The watched apply bound is a raw client applying the whole status at the same concurrency while a typed watch decodes every event, measured in each round between the operators (%d rounds); the raw merge bound is measured before the benchmarks, as in section 0. The server's CPU is that of kube-apiserver and etcd over the window, divided by the writes; before each window the API server collects its heap (`runtime.GC` through its `/debug/pprof/heap?gc=1`), so that no window pays for a collection of the garbage the windows before it left.\n\n", s.cfg.small, s.cfg.window, s.cfg.tpRounds)
	t := &table{}
	t.head("workers", "opgen (/s)", "cr (/s)", "opgen / cr", "watched apply bound, same round (/s)", "opgen / watched bound", "raw merge bound (/s)", "cr / merge bound", "server CPU ms per write: opgen", "cr", "opgen / cr", "CPU s per 1,000: opgen", "cr", "opgen / cr")
	for _, w := range s.cfg.tpWorkers {
		k := fmt.Sprintf("throughput.w%d", w)
		mb := s.res.Raw[rawWrites(mergePatch, w)]
		cw := s.res.get(k+".writes", cr)
		t.row(fmt.Sprint(w), s.cell(k+".reconciles", opgen, 1), s.cell(k+".reconciles", cr, 1), s.ratioCell(k+".reconciles", opgen, cr),
			s.cell(k+".writes", watchedBound, 1), s.ratioCell(k+".writes", opgen, watchedBound), num(median(mb)), medianRatio(cw, mb),
			s.cell(k+".serverCPUPerWrite", opgen, 1), s.cell(k+".serverCPUPerWrite", cr, 1), s.ratioCell(k+".serverCPUPerWrite", opgen, cr),
			s.cell(k+".cpuPer1000", opgen, 1), s.cell(k+".cpuPer1000", cr, 1), s.ratioCell(k+".cpuPer1000", opgen, cr))
	}
	b.WriteString(t.b.String())
	b.WriteString("\n")
	if len(s.res.Metrics["throughput.w1.requestMillis"]) == 0 {
		return
	}
	b.WriteString("Where a worker's time went, per status write: in the request (from sending it to its response's headers, timed by the probe's transport in both operators) and beside it (the rest: the framework, the handler, waiting for a CPU).\n\n")
	t = &table{}
	t.head("workers", "opgen in the request (ms)", "cr", "opgen beside it (ms)", "cr")
	for _, w := range s.cfg.tpWorkers {
		k := fmt.Sprintf("throughput.w%d", w)
		t.row(fmt.Sprint(w), s.cell(k+".requestMillis", opgen, 1), s.cell(k+".requestMillis", cr, 1),
			s.cell(k+".besideMillis", opgen, 1), s.cell(k+".besideMillis", cr, 1))
	}
	b.WriteString(t.b.String())
	b.WriteString("\n")
}

// medianRatio is the ratio of the medians of a and b, "–" when either
// was not measured.
func medianRatio(a, b []float64) string {
	if len(a) == 0 || len(b) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", median(a)/median(b))
}

func (s *suite) mdOverhead(b *strings.Builder) {
	if len(s.res.Metrics["noop.reconciles"]) == 0 {
		return
	}
	b.WriteString("## 4. Framework overhead\n\n")
	fmt.Fprintf(b, "No-op reconciles with every object asking to be reconciled again at once (RequeueAfter 1µs), %d objects, %d workers, no API call: process CPU (utime+stime from /proc) and heap allocations (runtime/metrics) per reconcile over %v. opgen runs its whole default pipeline (status compared with the cache, nothing written); controller-runtime's reconciler does `Get` from the cache.\n\n", s.cfg.small, s.cfg.workers, s.cfg.window)
	s.compare(b, [][3]string{
		{"reconciles per second", "noop.reconciles", "/s"},
		{"CPU per reconcile", "noop.cpuMicros", "µs"},
		{"allocations per reconcile", "noop.allocs", "allocs"},
		{"bytes allocated per reconcile", "noop.allocBytes", "B"},
	}, units)
}

func (s *suite) mdLatency(b *strings.Builder) {
	if len(s.res.Metrics["latency.p50"]) == 0 {
		return
	}
	b.WriteString("## 5. Event-to-reconcile latency\n\n")
	fmt.Fprintf(b, "Spec changes (merge patch) to random objects at %g/s for %v while the operator runs the status-writing handler (each change: one reconcile, one status write); from sending the PATCH to the start of the handler for that generation or a later one of the same object (a reconcile that falls behind is waited for, up to 30 s). The bare watch column is a plain watch of the same namespace in the harness during the same run; the overhead is the framework's percentile minus the bare watch's, round by round.\n\n", s.cfg.latencyRate, s.cfg.latencyFor)
	s.compare(b, [][3]string{
		{"write to reconcile p50", "latency.p50", "ms"},
		{"write to reconcile p99", "latency.p99", "ms"},
		{"bare watch p50 (same run)", "latency.bare.p50", "ms"},
		{"bare watch p99 (same run)", "latency.bare.p99", "ms"},
		{"overhead p50", "latency.overhead.p50", "ms"},
		{"overhead p99", "latency.overhead.p99", "ms"},
		{"samples per round", "latency.samples", "allocs"},
	}, units)
}

func (s *suite) mdSteady(b *strings.Builder) {
	if len(s.res.Metrics["steady.objectWritesPerMin"]) == 0 {
		return
	}
	b.WriteString("## 6. Steady-state writes\n\n")
	fmt.Fprintf(b, "Owned mode over %d objects that already match what the handler declares (one ConfigMap each, status Ready), with every object reconciled again every %v (RequeueAfter), counted over %v after one full period: writes to Loads, their status and ConfigMaps from the API server's `apiserver_request_total` (write verbs), and from the operator's own client; Lease writes apart (leader election on, lease %v / renew %v / retry %v, client-go's defaults). **cr** writes the status only when it changed (`equality.Semantic.DeepEqual`) and the ConfigMap with `controllerutil.CreateOrUpdate`; **cr always** patches the status on every reconcile, as the kubebuilder tutorial's reconciler updates it.\n\n",
		s.cfg.small, s.cfg.steadyPeriod, s.cfg.steadyWindow, s.cfg.stockLease.duration, s.cfg.stockLease.renew, s.cfg.stockLease.retry)
	t := &table{}
	t.head("measurement", "opgen", "cr", "cr always")
	for _, r := range [][2]string{
		{"object writes per minute (API server)", "steady.objectWritesPerMin"},
		{"object writes per minute (operator's client)", "steady.clientObjectWritesPerMin"},
		{"lease writes per minute (API server, all leases)", "steady.leaseWritesPerMin"},
		{"lease writes per minute (operator's client)", "steady.clientLeaseWritesPerMin"},
		{"reconciles per minute", "steady.reconcilesPerMin"},
	} {
		t.row(r[0], s.cell(r[1], opgen, 1), s.cell(r[1], cr, 1), s.cell(r[1], crAlways, 1))
	}
	b.WriteString(t.b.String())
	b.WriteString("\n")
}

func (s *suite) mdFailover(b *strings.Builder) {
	if len(s.res.Metrics["failover.graceful.leaderless"]) == 0 {
		return
	}
	b.WriteString("## 7. Leader failover\n\n")
	fmt.Fprintf(b, "Two replicas of the same variant, no-op handler over %d objects, lease %v / renew deadline %v / retry period %v for all. The leader gets SIGTERM (graceful) or SIGKILL (crash); right after the signal the harness changes one object's spec. Leaderless window: from the signal to a watch of the Lease showing a new holder. First reconcile: from the signal to the new leader's handler starting on the changed object. The standby was started 3 s before (caches synced). cr tuned differs from cr only in a graceful shutdown, so it is not repeated for the crash.\n\n",
		s.cfg.small, s.cfg.failover.duration, s.cfg.failover.renew, s.cfg.failover.retry)
	s.compare(b, [][3]string{
		{"graceful: leaderless window", "failover.graceful.leaderless", "ms"},
		{"graceful: first reconcile of a change", "failover.graceful.firstReconcile", "ms"},
		{"crash: leaderless window", "failover.crash.leaderless", "ms"},
		{"crash: first reconcile of a change", "failover.crash.firstReconcile", "ms"},
	}, map[string]float64{"ms": 1000})
}

func (s *suite) mdWebhook(b *strings.Builder) {
	if len(s.res.Metrics["webhook.validate.p50"]) == 0 {
		return
	}
	b.WriteString("## 7b. Webhooks\n\n")
	b.WriteString("In process, over HTTPS with keep-alive (HTTP/2), one client sending one request at a time, the servers taking turns round by round: **opgen**'s webhook server (a running Operator's, typed hooks), **cr** controller-runtime's `webhook.Server` (`admission.WithValidator`/`WithDefaulter`, the hub-and-spoke conversion handler), and **bare**, a net/http TLS handler that decodes the review and the object, checks or converts, and answers (the floor). Validate: an AdmissionReview of a benchmark Load (~2 KiB) that is allowed; mutate: the same with `replicas` to default (one JSON patch operation); convert: a ConversionReview of 1,000 todo-operator Todos from v1alpha1 to v1 with the example's generated conversions. Milliseconds; medians over rounds [min–max]; the overhead is the server's percentile minus bare's, round by round.\n\n")
	t := &table{}
	t.head("measurement", "opgen", "cr", "bare", "opgen / cr")
	for _, r := range [][2]string{
		{"validate p50 (ms)", "webhook.validate.p50"},
		{"validate p99 (ms)", "webhook.validate.p99"},
		{"validate mean (ms)", "webhook.validate.mean"},
		{"validate overhead over bare, p50 (ms)", "webhook.validate.overhead.p50"},
		{"validate overhead over bare, p99 (ms)", "webhook.validate.overhead.p99"},
		{"mutate p50 (ms)", "webhook.mutate.p50"},
		{"mutate p99 (ms)", "webhook.mutate.p99"},
		{"convert 1,000 objects p50 (ms)", "webhook.convert1000.p50"},
		{"convert 1,000 objects p99 (ms)", "webhook.convert1000.p99"},
		{"conversion throughput (objects/s)", "webhook.convert.objectsPerSecond"},
	} {
		t.row(r[0], rawCell(s.res.get(r[1], opgen), 1), rawCell(s.res.get(r[1], cr), 1), rawCell(s.res.get(r[1], bare), 1), s.ratioCell(r[1], opgen, cr))
	}
	b.WriteString(t.b.String())
	b.WriteString("\n")
}

func (s *suite) mdShard(b *strings.Builder) {
	if len(s.res.get("shard.first.seconds", shardSingle)) == 0 && len(s.res.Exits) == 0 {
		return
	}
	b.WriteString("## 7c. Sharding\n\n")
	fmt.Fprintf(b, "%d objects; no-op handler; medians of up to 3 rounds; lease %v / renew %v / retry %v. **opgen single leader** and **cr** are one leader over all objects; **opgen sharded xN** are N replicas with `--sharding` (identities replica-0…, stable from round to round; the first sharded round includes the sharder labelling every object with its bucket, one write each in the objects' life, and the later rounds find them labelled). First full reconcile: from the first process's start to every object reconciled once by some replica. Memory: the largest of the replicas' peak RSS and Go heap after GC, once there. In every round of 2 and 4 replicas one replica gets SIGKILL, the leader and a member that does not lead in turn (once no handover is under way; crash: from the kill until the sharder's assignment gives its buckets to the others, until the others report in their member Leases that they hold them, caches synced, and until they reconcile the objects it reconciled last, the first of them and all of them; a move writes the assignment of buckets, no object), and then one is added (scale-up window: from its start to the first reconcile by it of the last object moved to it, once none came for 3 s).\n\n",
		s.cfg.shardN, s.cfg.failover.duration, s.cfg.failover.renew, s.cfg.failover.retry)
	t := &table{}
	t.head("variant", "first full reconcile (s)", "peak RSS per replica (MiB)", "heap per replica (MiB)", "heap / single leader's",
		"crash of the leader: reassigned / first object (s)", "crash of a member: reassigned / first object (s)", "crash: buckets held by the others (s)", "crash: whole share (s)", "objects of the killed replica",
		"scale-up window (s)", "objects moved to the added replica", "operators that exited on their own")
	const mib = 1.0 / (1 << 20)
	for _, v := range []string{shardSingle, shardCR, shardedVariant(1), shardedVariant(2), shardedVariant(4)} {
		t.row(v, s.cell("shard.first.seconds", v, 1), s.cell("shard.peakrss.bytes", v, mib), s.cell("shard.heap.bytes", v, mib),
			s.ratioCell("shard.heap.bytes", v, shardSingle), s.cell("shard.crash.leader.reassigned.seconds", v, 1)+" / "+s.cell("shard.crash.leader.first.seconds", v, 1),
			s.cell("shard.crash.member.reassigned.seconds", v, 1)+" / "+s.cell("shard.crash.member.first.seconds", v, 1),
			s.cell("shard.crash.taken.seconds", v, 1), s.cell("shard.crash.seconds", v, 1), s.cell("shard.crash.objects", v, 1),
			s.cell("shard.scaleup.seconds", v, 1), s.cell("shard.scaleup.objects", v, 1), fmt.Sprint(s.res.exitsOf(v)))
	}
	b.WriteString(t.b.String())
	b.WriteString("\n")
	mdExits(b, s.res.Exits, shardSpare)
}

// mdExits lists the operators of the sharding benchmark that exited on
// their own.
func mdExits(b *strings.Builder, exits []memberExit, spare int) {
	if len(exits) == 0 {
		return
	}
	fmt.Fprintf(b, "Operators that exited on their own (a member that misses its member Lease's renew deadline stops working, so that its objects can move to the others): each such round's values were dropped and the round was run again, up to %d times per variant in all; a variant whose rows say – ran out of them.\n\n", spare)
	for _, x := range exits {
		who := x.Variant
		if x.Identity != "" {
			who += ", " + x.Identity
		}
		fmt.Fprintf(b, "- **%s**, attempt %d, at %s (load average %s): exited (%s) %.1f s after its start, %.1f s into the round, while the harness was %s. Its log's tail:\n\n", who, x.Attempt, x.At, x.Load, x.Status, x.AfterStart, x.IntoRound, x.While)
		b.WriteString("  ```\n")
		for _, l := range x.LogTail {
			b.WriteString("  " + l + "\n")
		}
		b.WriteString("  ```\n\n")
	}
}

// ratioNum is ratioCell with num's precision: the warm start is a
// hundredth of envtest's, which two decimals round to 0.01.
func ratioNum(r *results, metric, a, b string) string {
	sm, ok := summarize(ratios(r.get(metric, a), r.get(metric, b)))
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%s [%s–%s]", num(sm.med), num(sm.min), num(sm.max))
}
