package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// compareRow is one row of a comparison: a metric of both sides, their
// ratio B / A round by round, and a verdict.
type compareRow struct {
	name   string
	metric string
	bench  string // the benchmark that measures metric
	unit   string
	scale  float64
	higher bool   // higher is better (rates); else lower is (times, costs)
	raw    string // each side's value as a fraction of this raw bound
}

// compareRows are the rows a comparison reports, in the order the
// benchmarks run; those of benchmarks not run are left out.
func (s *suite) compareRows() []compareRow {
	const ms = 1000
	rows := []compareRow{
		{name: fmt.Sprintf("start to all handled, N=%d", s.cfg.small), metric: "coldstart.small.seconds", bench: "coldstart", unit: "s", scale: 1},
		{name: fmt.Sprintf("start to all handled, N=%d", s.cfg.large), metric: "coldstart.large.seconds", bench: "coldstart", unit: "s", scale: 1},
		{name: fmt.Sprintf("start to all handled, N=%d, of the raw paged list + decode", s.cfg.small), metric: "coldstart.small.seconds", bench: "coldstart", scale: 1, raw: "list.small.seconds"},
		{name: fmt.Sprintf("start to all handled, N=%d, of the raw paged list + decode", s.cfg.large), metric: "coldstart.large.seconds", bench: "coldstart", scale: 1, raw: "list.large.seconds"},
		{name: fmt.Sprintf("operator CPU to all handled, N=%d", s.cfg.small), metric: "coldstart.small.cpu.seconds", bench: "coldstart", unit: "CPU s", scale: 1},
		{name: fmt.Sprintf("operator CPU to all handled, N=%d", s.cfg.large), metric: "coldstart.large.cpu.seconds", bench: "coldstart", unit: "CPU s", scale: 1},
		{name: fmt.Sprintf("peak RSS, N=%d", s.cfg.small), metric: "peakrss.small.bytes", bench: "coldstart", unit: "MiB", scale: mib},
		{name: fmt.Sprintf("peak RSS, N=%d", s.cfg.large), metric: "peakrss.large.bytes", bench: "coldstart", unit: "MiB", scale: mib},
		{name: "peak RSS, empty namespace", metric: "peakrss.empty.bytes", bench: "coldstart", unit: "MiB", scale: mib},
		{name: fmt.Sprintf("peak RSS less file-backed, N=%d", s.cfg.small), metric: "peakanon.small.bytes", bench: "coldstart", unit: "MiB", scale: mib},
		{name: "heap per cached object", metric: "heap.perobject.bytes", bench: "coldstart", unit: "B", scale: 1},
		{name: "start to all reconciled, owned", metric: "coldstart.owned.seconds", bench: "owned", unit: "s", scale: 1},
		{name: "heap, owned", metric: "heap.owned.bytes", bench: "owned", unit: "MiB", scale: mib},
		{name: "object writes on restart, owned", metric: "owned.writes", bench: "owned", unit: "writes", scale: 1},
		{name: "a change during a cold start", metric: "userchange.seconds", bench: "userchange", unit: "ms", scale: ms},
		{name: "the same change once idle", metric: "userchange.idle.seconds", bench: "userchange", unit: "ms", scale: ms},
		{name: "the first change, made as the work starts", metric: "userchange.first.seconds", bench: "userchange", unit: "ms", scale: ms},
	}
	for _, w := range s.cfg.tpWorkers {
		k := fmt.Sprintf("throughput.w%d", w)
		rows = append(rows,
			compareRow{name: fmt.Sprintf("status writes, %d workers", w), metric: k + ".writes", bench: "throughput", unit: "/s", scale: 1, higher: true},
			compareRow{name: fmt.Sprintf("status writes, %d workers, of the raw apply bound", w), metric: k + ".writes", bench: "throughput", scale: 1, higher: true, raw: rawWrites(applyPatch, w)},
			compareRow{name: fmt.Sprintf("CPU per 1,000 writes, %d workers", w), metric: k + ".cpuPer1000", bench: "throughput", unit: "CPU s", scale: 1})
	}
	return append(rows,
		compareRow{name: "no-op reconciles", metric: "noop.reconciles", bench: "overhead", unit: "/s", scale: 1, higher: true},
		compareRow{name: "CPU per no-op reconcile", metric: "noop.cpuMicros", bench: "overhead", unit: "µs", scale: 1},
		compareRow{name: "allocations per no-op reconcile", metric: "noop.allocs", bench: "overhead", unit: "allocs", scale: 1},
		compareRow{name: "bytes allocated per no-op reconcile", metric: "noop.allocBytes", bench: "overhead", unit: "B", scale: 1},
		compareRow{name: "event to reconcile, p50", metric: "latency.p50", bench: "latency", unit: "ms", scale: 1},
		compareRow{name: "event to reconcile, p99", metric: "latency.p99", bench: "latency", unit: "ms", scale: 1},
		compareRow{name: "steady-state object writes", metric: "steady.objectWritesPerMin", bench: "steady", unit: "/min", scale: 1},
		compareRow{name: "steady-state lease writes", metric: "steady.leaseWritesPerMin", bench: "steady", unit: "/min", scale: 1},
		compareRow{name: "graceful failover, leaderless window", metric: "failover.graceful.leaderless", bench: "failover", unit: "ms", scale: ms},
		compareRow{name: "graceful failover, first reconcile of a change", metric: "failover.graceful.firstReconcile", bench: "failover", unit: "ms", scale: ms},
		compareRow{name: "crash failover, leaderless window", metric: "failover.crash.leaderless", bench: "failover", unit: "ms", scale: ms},
		compareRow{name: "crash failover, first reconcile of a change", metric: "failover.crash.firstReconcile", bench: "failover", unit: "ms", scale: ms},
		compareRow{name: "code generation, fixture, cold", metric: "codegen.opgen cold", bench: "codegen", unit: "s", scale: 1},
		compareRow{name: "code generation, fixture, warm", metric: "codegen.opgen warm (--force)", bench: "codegen", unit: "s", scale: 1},
		compareRow{name: "code generation, fixture, no-op", metric: "codegen.opgen no-op (binary)", bench: "codegen", unit: "ms", scale: ms},
		compareRow{name: "code generation, no-op at 200 kinds", metric: "codegen.opgen no-op at 200 kinds (binary)", bench: "codegen", unit: "ms", scale: ms},
	)
}

// sideRatios divides B by A round by round. A round where A is 0 is 1
// when B is 0 too and +Inf otherwise (writes where there were none).
func sideRatios(a, b []float64) []float64 {
	var out []float64
	for i := range min(len(a), len(b)) {
		switch {
		case a[i] == 0 && b[i] == 0:
			out = append(out, 1)
		case a[i] == 0:
			out = append(out, math.Inf(1))
		default:
			out = append(out, b[i]/a[i])
		}
	}
	return out
}

// minJudgedRounds is the fewest rounds a verdict rests on: with two, both
// rounds on one side of 1 happen by chance one time in two.
const minJudgedRounds = 3

// The verdicts of a comparison's row.
const (
	verdictBetter  = "better"
	verdictWorse   = "worse"
	verdictNoise   = "within noise"
	verdictUnknown = "not measured"
)

// judge gives B's verdict over A from the ratios B / A of the rounds:
// better or worse only when every round's ratio lies beyond 1 on the same
// side by more than noise (above 1+noise, or below 1/(1+noise)), within
// noise otherwise. A single round against the others is noise, not a
// finding: the guard must not cry wolf on a shared machine.
func judge(ratios []float64, higherIsBetter bool, noise float64) string {
	switch {
	case len(ratios) == 0:
		return verdictUnknown
	case len(ratios) < minJudgedRounds:
		return fmt.Sprintf("not judged: %d rounds (%d needed)", len(ratios), minJudgedRounds)
	}
	up := slices.Min(ratios) > 1+noise
	down := slices.Max(ratios) < 1/(1+noise)
	switch {
	case up == higherIsBetter && (up || down):
		return verdictBetter
	case up || down:
		return verdictWorse
	}
	return verdictNoise
}

// compared is a row with its numbers.
type compared struct {
	compareRow
	a, b   []float64 // each side's per-round values (fractions of the bound for a raw row)
	ratios []float64
}

func (s *suite) rowOf(r compareRow) compared {
	c := compared{compareRow: r, a: s.res.get(r.metric, sideA), b: s.res.get(r.metric, sideB)}
	if r.raw != "" {
		c.a, c.b = ofBound(c.a, s.res.Raw[r.raw]), ofBound(c.b, s.res.Raw[r.raw])
	}
	c.ratios = sideRatios(c.a, c.b)
	return c
}

func (c compared) verdict(noise float64) string { return judge(c.ratios, c.higher, noise) }

func (c compared) sideCell(v []float64) string {
	sm, ok := summarize(v)
	if !ok {
		return "–"
	}
	if c.raw != "" {
		return fmt.Sprintf("%.2f [%.2f–%.2f]", sm.med, sm.min, sm.max)
	}
	return fmt.Sprintf("%s [%s–%s]", num(sm.med*c.scale), num(sm.min*c.scale), num(sm.max*c.scale))
}

func (c compared) ratioCell() string {
	sm, ok := summarize(c.ratios)
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%s [%s–%s]", ratioText(sm.med), ratioText(sm.min), ratioText(sm.max))
}

func ratioText(r float64) string {
	if math.IsInf(r, 1) {
		return "∞"
	}
	return fmt.Sprintf("%.2f", r)
}

// compareMarkdown is the report of a comparison.
func (s *suite) compareMarkdown(base string) string {
	var b strings.Builder
	r := s.res
	a, bb := r.Sides[sideA], r.Sides[sideB]
	fmt.Fprintf(&b, "# opgen at two commits, side by side, %s\n\n", r.Date)
	mode := "full-size"
	if s.cfg.quick {
		mode = "quick (small N, short windows)"
	}
	flags := fmt.Sprintf("-compare %s,%s -only %s -rounds %d", a.Ref, bb.Ref, strings.Join(s.ranBenchmarks(), ","), s.cfg.rounds)
	if s.cfg.quick {
		flags += " -quick"
	}
	fmt.Fprintf(&b, "Written by `make bench-compare` (`cd bench && go run ./harness %s`), a %s run. Raw numbers: [%s.json](%s.json).\n\n",
		flags, mode, base, base)
	fmt.Fprintf(&b, "- **%s**: %s, commit %s, %q\n", sideA, a.label(), a.Commit, a.Subject)
	fmt.Fprintf(&b, "- **%s**: %s, commit %s, %q\n\n", sideB, bb.label(), bb.Commit, bb.Subject)
	b.WriteString("The opgen benchmark operator (bench/operator/opgen) was built at each commit, against the root module of the same commit; this harness, the control plane and the objects are the same for both. ")
	for _, n := range r.CompareNotes {
		b.WriteString(n + " ")
	}
	fmt.Fprintf(&b, "\n\nMachine: %s CPUs, %s memory, %s; load average %s at the start, %s at the end (1, 5 and 15 minutes; other work shares the machine).\n\n",
		r.Machine["cpus"], r.Machine["memTotal"], r.Machine["go"], r.Machine["loadavgAtStart"], r.Machine["loadavgAtEnd"])
	fmt.Fprintf(&b, "%d rounds; in each, A and B run once, the order alternating from round to round (A B, B A, …), each side over namespaces of its own holding the same objects. ", s.cfg.rounds)
	b.WriteString("Each side's value is the median over the rounds [min–max]; B / A is taken round by round, then its median [min–max]. ")
	fmt.Fprintf(&b, "Verdict: **better** or **worse** when every round's B / A lies beyond 1 on the same side by more than %.0f%% (`-noise`), **within noise** otherwise; fewer than %d rounds are not judged. The load column is the 1-minute load average at the start and the end of the benchmark.\n\n", s.cfg.noise*100, minJudgedRounds)
	b.WriteString(s.compareTable())
	b.WriteString("\n")
	s.mdRaw(&b)
	if len(r.Errors) > 0 {
		b.WriteString("## Errors\n\nThese parts of the run failed; their rows above are missing or partial.\n\n")
		for _, e := range r.Errors {
			fmt.Fprintf(&b, "- %s\n", strings.ReplaceAll(e, "\n", " "))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Phases\n\n")
	t := &table{}
	t.head("phase", "seconds", "load average at the start", "at the end")
	for _, p := range r.Phases {
		t.row(p.Name, fmt.Sprintf("%.0f", p.Seconds), p.LoadStart, p.LoadEnd)
	}
	b.WriteString(t.b.String())
	return b.String()
}

// compareTable is the rows of the benchmarks run, with a verdict each.
func (s *suite) compareTable() string {
	t := &table{}
	t.head("row", "A", "B", "B / A", "verdict", "load")
	for _, row := range s.compareRows() {
		if !s.cfg.runs(row.bench) {
			continue
		}
		c := s.rowOf(row)
		v := c.verdict(s.cfg.noise)
		if v == verdictBetter || v == verdictWorse {
			v = "**" + v + "**"
		}
		label := c.name
		if c.unit != "" {
			label += " (" + c.unit + ")"
		}
		t.row(label, c.sideCell(c.a), c.sideCell(c.b), c.ratioCell(), v, s.phaseLoad(c.bench))
	}
	return t.b.String()
}

// phaseLoad is the 1-minute load average at the start and the end of the
// benchmark's phase.
func (s *suite) phaseLoad(bench string) string {
	for _, p := range s.res.Phases {
		if p.Name == bench {
			return firstField(p.LoadStart) + " → " + firstField(p.LoadEnd)
		}
	}
	return "–"
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// ranBenchmarks are the benchmarks of this run, in their order.
func (s *suite) ranBenchmarks() []string {
	var out []string
	for _, b := range benchmarks {
		if s.cfg.runs(b) {
			out = append(out, b)
		}
	}
	return out
}

// writeCompare writes <out>/<compareName>.md and .json and prints the
// table.
func (s *suite) writeCompare(dir string) error {
	name := s.compareName()
	base := filepath.Join(dir, name)
	data, err := json.MarshalIndent(s.res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".json", data, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(base+".md", []byte(s.compareMarkdown(name)), 0o644); err != nil {
		return err
	}
	fmt.Printf("A: %s\nB: %s\n\n%s\n", s.res.Sides[sideA].label(), s.res.Sides[sideB].label(), s.compareTable())
	logf("wrote %s.md and .json", base)
	return nil
}

// compareName is <date>-compare-<A>-<B>, then the benchmarks run when
// -only chose them, so that compares of the same commits over different
// benchmarks keep their own files.
func (s *suite) compareName() string {
	name := fmt.Sprintf("%s-compare-%s-%s", s.res.Date, s.res.Sides[sideA].short(), s.res.Sides[sideB].short())
	if s.res.Sides[sideB].Dirty {
		name += "-dirty"
	}
	for _, b := range benchmarks {
		if s.cfg.only[b] {
			name += "-" + b
		}
	}
	if s.cfg.quick {
		name += "-quick"
	}
	return name
}
