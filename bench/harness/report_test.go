package main

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testSuite(only ...string) *suite {
	cfg := config{rounds: 3, small: 1000, large: 10000, tpWorkers: []int{1, 4, 16}, codegenKinds: "10,50,200", noise: 0.03}
	if len(only) > 0 {
		cfg.only = map[string]bool{}
		for _, b := range only {
			cfg.only[b] = true
		}
	}
	return &suite{cfg: cfg, res: newResults(cfg)}
}

func checkNamed(t *testing.T, s *suite, name string) check {
	t.Helper()
	i := slices.IndexFunc(s.checks(), func(c check) bool { return c.name == name })
	require.GreaterOrEqual(t, i, 0, "no check %q", name)
	return s.checks()[i]
}

func TestRawBoundNotMeasured(t *testing.T) {
	s := testSuite("coldstart")
	name := "cold start, N=10000, of the raw paged list + decode"
	s.res.add("coldstart.large.seconds", opgen, 1.5)
	e := s.evaluate(checkNamed(t, s, name))
	assert.False(t, e.ok, "no bound, no figure")
	assert.Equal(t, "not measured", e.valueText(), "never NaN")

	s.res.Raw["list.large.seconds"] = []float64{2, 2.5, 3}
	e = s.evaluate(checkNamed(t, s, name))
	require.True(t, e.ok)
	assert.Equal(t, []float64{0.6}, e.values)
	assert.True(t, e.met)
}

// The cold start is judged against the paged list of its own round, when
// the benchmark measured one in each round, not against the list
// measured minutes before the benchmarks.
func TestListBoundOfTheSameRound(t *testing.T) {
	s := testSuite("coldstart")
	for _, r := range [][2]float64{{1.5, 2}, {2, 2.5}, {3, 2.5}} {
		s.res.add("coldstart.large.seconds", opgen, r[0])
		s.res.Raw[roundBound("list.large.seconds")] = append(s.res.Raw[roundBound("list.large.seconds")], r[1])
	}
	s.res.Raw["list.large.seconds"] = []float64{10}
	e := s.evaluate(checkNamed(t, s, "cold start, N=10000, of the raw paged list + decode"))
	require.True(t, e.ok)
	assert.Equal(t, []float64{0.75, 0.8, 1.2}, e.values)
	assert.True(t, e.met, "median 0.8")
}

// Status writes are judged against the watched apply bound of the same
// round, round by round.
func TestWatchedBoundOfTheSameRound(t *testing.T) {
	s := testSuite("throughput")
	for _, r := range [][2]float64{{90, 100}, {150, 200}, {190, 200}} {
		s.res.add("throughput.w4.writes", opgen, r[0])
		s.res.add("throughput.w4.writes", watchedBound, r[1])
	}
	e := s.evaluate(checkNamed(t, s, "status writes, 4 workers, of the watched apply bound of the same round"))
	require.True(t, e.ok)
	assert.Equal(t, []float64{0.9, 0.75, 0.95}, e.values)
	assert.True(t, e.met, "median 0.9")
}

func TestRawPlan(t *testing.T) {
	plan := testSuite("throughput").rawPlan()
	assert.Equal(t, rawPlan{concurrency: []int{1, 4, 16}, kinds: []string{mergePatch, watchedApply}}, plan,
		"the merge and watched apply bounds of the table")

	s := testSuite("throughput")
	s.cfg.compare = []string{"v0.1.0", ""}
	assert.Equal(t, rawPlan{concurrency: []int{1, 4, 16}, kinds: []string{applyPatch}}, s.rawPlan(), "both sides apply")

	assert.Equal(t, rawPlan{lists: []string{"small", "large"}}, testSuite("coldstart").rawPlan())
	assert.True(t, testSuite("latency", "steady").rawPlan().empty())

	full := testSuite().rawPlan()
	assert.Equal(t, []int{1, 2, 4, 8, 16}, full.concurrency)
	assert.Equal(t, []string{mergePatch, applyPatch, watchedApply}, full.kinds, "the full run's order, as before, and the watched apply")
	assert.True(t, full.watch)
}

// TestRawChecksNameTheirBenchmark keeps a future row judged against a raw
// bound from escaping the partial runs' measurement of it.
func TestRawChecksNameTheirBenchmark(t *testing.T) {
	for _, c := range testSuite().checks() {
		if c.raw != "" {
			assert.Contains(t, benchmarks, c.bench, "check %q is judged against %s", c.name, c.raw)
		}
	}
	for _, r := range testSuite().compareRows() {
		assert.Contains(t, comparable, r.bench, "compare row %q", r.name)
	}
}

func TestRestatedTargets(t *testing.T) {
	s := testSuite()
	for i, v := range []float64{0.024, 0.020, 0.030} {
		s.res.add("userchange.seconds", opgen, v)
		s.res.add("userchange.idle.seconds", opgen, 0.012)
		s.res.add("userchange.seconds", cr, []float64{0.025, 0.024, 0.028}[i])
		s.res.add("latency.p50", opgen, []float64{14, 12, 15}[i])
		s.res.add("latency.p50", cr, []float64{15, 13, 14}[i])
	}
	floor := s.evaluate(checkNamed(t, s, "a user's change during a cold start of 10000 objects, of the same change once idle"))
	assert.InDeltaSlice(t, []float64{2, 1.667, 2.5}, floor.values, 0.001, "round by round, over opgen's own floor")
	assert.True(t, floor.met, "median 2.0: at the limit")
	assert.Equal(t, "≤ 2x the floor", floor.targetText())

	vsCR := s.evaluate(checkNamed(t, s, "a user's change during a cold start of 10000 objects, latency"))
	assert.True(t, vsCR.met, "0.96x controller-runtime")
	assert.Equal(t, "≤ 1", vsCR.targetText())

	p50 := s.evaluate(checkNamed(t, s, "event-to-reconcile latency p50"))
	assert.InDeltaSlice(t, []float64{14.0 / 15, 12.0 / 13, 15.0 / 14}, p50.values, 1e-9)
	assert.True(t, p50.met)
	for _, c := range s.checks() {
		assert.NotEqual(t, "latency.overhead.p99", c.metric, "no absolute over the bare watch")
	}
}

func TestRollback(t *testing.T) {
	r := newResults(config{})
	r.add("shard.first.seconds", "x2", 1)
	r.add("shard.heap.bytes", "x2", 10)
	m := r.mark()
	r.add("shard.first.seconds", "x2", 2)
	r.add("shard.first.seconds", "x4", 3)
	r.add("shard.crash.seconds", "x2", 4)
	r.rollback(m)
	assert.Equal(t, map[string]map[string][]float64{
		"shard.first.seconds": {"x2": {1}},
		"shard.heap.bytes":    {"x2": {10}},
	}, r.Metrics)
	r.add("shard.first.seconds", "x2", 5)
	assert.Equal(t, []float64{1, 5}, r.get("shard.first.seconds", "x2"), "a round run again counts once")
}

func TestAttemptRounds(t *testing.T) {
	exit := &exitError{p: &proc{variant: opgen, identity: "replica-1"}, while: "waiting"}
	t.Run("an exit runs its round again", func(t *testing.T) {
		var ran []int
		var exits []int
		done, err := attemptRounds(3, 2, func(r int) error {
			ran = append(ran, r)
			if len(ran) == 2 {
				return exit
			}
			return nil
		}, func(e *exitError, attempt int) { exits = append(exits, attempt) })
		require.NoError(t, err)
		assert.Equal(t, 3, done)
		assert.Equal(t, []int{0, 1, 1, 2}, ran)
		assert.Equal(t, []int{2}, exits)
	})
	t.Run("the spare attempts run out, the run goes on", func(t *testing.T) {
		n := 0
		done, err := attemptRounds(3, 2, func(int) error { return exit }, func(*exitError, int) { n++ })
		require.NoError(t, err)
		assert.Equal(t, 0, done)
		assert.Equal(t, 5, n)
	})
	t.Run("a wrapped exit counts too", func(t *testing.T) {
		n := 0
		first := true
		done, err := attemptRounds(1, 2, func(int) error {
			if first {
				first = false
				return errors.Join(errors.New("4 replicas"), exit)
			}
			return nil
		}, func(*exitError, int) { n++ })
		require.NoError(t, err)
		assert.Equal(t, 1, done)
		assert.Equal(t, 1, n)
	})
	t.Run("any other error stops it", func(t *testing.T) {
		boom := errors.New("timeout")
		done, err := attemptRounds(3, 2, func(r int) error {
			if r == 1 {
				return boom
			}
			return nil
		}, func(*exitError, int) { t.Fatal("not an exit") })
		assert.ErrorIs(t, err, boom)
		assert.Equal(t, 1, done)
	})
}

func TestExitsInTheReport(t *testing.T) {
	s := testSuite("shard")
	s.res.Exits = []memberExit{{Variant: shardedVariant(4), Identity: "replica-1", Attempt: 1, While: "waiting for the replicas to reconcile every object once",
		AfterStart: 5.4, IntoRound: 5.6, Status: "exit status 1", At: "2026-11-26T14:25:39Z", Load: "6.1 5.0 4.2",
		LogTail: []string{`level=ERROR msg="failed to renew the lease in time"`, "opgen operator: runtime: lost the member lease of sharding"}}}
	var b strings.Builder
	s.mdShard(&b)
	got := b.String()
	assert.Contains(t, got, "**opgen sharded x4, replica-1**, attempt 1, at 2026-11-26T14:25:39Z (load average 6.1 5.0 4.2): exited (exit status 1) 5.4 s after its start, 5.6 s into the round, while the harness was waiting for the replicas to reconcile every object once.")
	assert.Contains(t, got, "  opgen operator: runtime: lost the member lease of sharding\n")
	assert.Contains(t, got, "| opgen sharded x4 | – |")
	assert.Regexp(t, `\| opgen sharded x4 \|[^\n]* \| 1 \|\n`, got, "its exits counted in its row")

	e := s.evaluate(checkNamed(t, s, "sharding: crash of the leader, its buckets reassigned, 4 replicas (lease 0s + 1s)"))
	assert.Equal(t, "not measured: 1 replicas exited on their own (see Sharding)", e.valueText())
}

// TestThroughputTimeSplit: the table of where a worker's time went is
// written when the probe timed the writes, and left out of a run whose
// operators did not (an older side of a comparison).
func TestThroughputTimeSplit(t *testing.T) {
	s := testSuite("throughput")
	for _, w := range s.cfg.tpWorkers {
		k := "throughput.w" + strconv.Itoa(w)
		s.res.add(k+".reconciles", opgen, 80)
		s.res.add(k+".reconciles", cr, 70)
	}
	var b strings.Builder
	s.mdThroughput(&b)
	assert.NotContains(t, b.String(), "Where a worker's time went")

	s.res.add("throughput.w1.requestMillis", opgen, 11.5)
	s.res.add("throughput.w1.besideMillis", opgen, 1.25)
	s.res.add("throughput.w1.besideMillis", cr, 2.5)
	b.Reset()
	s.mdThroughput(&b)
	assert.Contains(t, b.String(), "Where a worker's time went")
	assert.Contains(t, b.String(), "| 1 | 11.5 [11.5–11.5] | – | 1.25 [1.25–1.25] | 2.50 [2.50–2.50] |")
}

func TestParseMemory(t *testing.T) {
	status := "Name:\top\nVmPeak:\t 1310720 kB\nVmHWM:\t   31144 kB\nVmRSS:\t   30000 kB\nRssAnon:\t    5572 kB\nRssFile:\t   25072 kB\n"
	peak, file := parseMemory(status)
	assert.Equal(t, 31144.0*1024, peak)
	assert.Equal(t, 25072.0*1024, file)
}

func TestColdStartFileBackedRows(t *testing.T) {
	s := testSuite("coldstart")
	s.res.add("coldstart.small.seconds", opgen, 0.5)
	s.res.add("peakanon.small.bytes", opgen, 10<<20)
	s.res.add("peakanon.small.bytes", cr, 20<<20)
	var b strings.Builder
	s.mdColdStart(&b)
	assert.Contains(t, b.String(), "| peak RSS less file-backed, N=1000 (MiB) | 10.0 [10.0–10.0] | 20.0 [20.0–20.0] | – | 0.50 [0.50–0.50] | – |")
}

// TestStartMarks: the moments of opgen's start are shown for both sizes
// when the operator marked them, and not at all when it did not.
func TestStartMarks(t *testing.T) {
	s := testSuite("coldstart")
	var b strings.Builder
	s.mdStartMarks(&b)
	assert.Empty(t, b.String())
	for size, base := range map[string]float64{"small": 0.1, "large": 1} {
		for i, m := range startMarks {
			s.res.add("coldstart."+size+".mark."+m+".seconds", opgen, base*float64(i+1))
		}
		s.res.add("coldstart."+size+".seconds", opgen, base*5)
	}
	s.mdStartMarks(&b)
	assert.Contains(t, b.String(), "| initial list arrived | 0.2 [0.2–0.2] | 2.00 [2.00–2.00] |")
	assert.Contains(t, b.String(), "| every object handled | 0.5 [0.5–0.5] | 5.00 [5.00–5.00] |")
}

func TestPartialRunSaysSo(t *testing.T) {
	assert.Contains(t, testSuite().markdown(nil, "x", true), "full run.")
	assert.Contains(t, testSuite("latency", "coldstart").markdown(nil, "x", false), "partial (`-only coldstart,latency`) run.")
}

// TestRunNameAndChartLink: a run's files are named after its date, commit
// and sections, and its report links a chart only when one was written.
func TestRunNameAndChartLink(t *testing.T) {
	s := testSuite("latency", "coldstart")
	s.res.Date = "2026-11-30"
	s.res.Commit = &side{Commit: "10cfc76aa", Dirty: true}
	assert.Equal(t, "2026-11-30-10cfc76-dirty-coldstart-latency", s.runName())
	md := s.markdown(nil, s.runName(), false)
	assert.Contains(t, md, "run of the working tree (10cfc76 + uncommitted changes).")
	assert.NotContains(t, md, ".png")

	full := testSuite()
	full.res.Date = "2026-11-30"
	full.res.Commit = &side{Commit: "10cfc76aa"}
	assert.Equal(t, "2026-11-30-10cfc76", full.runName())
	assert.Contains(t, full.markdown(nil, full.runName(), true), "chart: [2026-11-30-10cfc76.png](2026-11-30-10cfc76.png).")
}

// TestTestkitCheck: the warm start is judged against envtest's round by
// round; the cold start is in the section's table only.
func TestTestkitCheck(t *testing.T) {
	s := testSuite("testkit")
	for i, v := range []float64{5, 6, 4} {
		s.res.add("testkit.first.seconds", kitEnvtest, v)
		s.res.add("testkit.first.seconds", kitCold, v*0.9)
		s.res.add("testkit.first.seconds", kitWarm, []float64{0.1, 0.12, 2}[i])
		s.res.add("testkit.total.seconds", kitEnvtest, v+2)
		s.res.add("testkit.total.seconds", kitCold, v)
		s.res.add("testkit.total.seconds", kitWarm, 0.6)
	}
	e := s.evaluate(checkNamed(t, s, "test kit: start to first test, of envtest's"))
	require.True(t, e.ok)
	assert.InDeltaSlice(t, []float64{0.02, 0.02, 0.5}, e.values, 1e-9)
	assert.True(t, e.met, "judged on the median")
	for _, c := range s.checks() {
		assert.NotEqual(t, kitCold, c.of, "the cold start is not judged")
	}
	var b strings.Builder
	s.mdTestkit(&b)
	assert.Contains(t, b.String(), "| envtest | 5.00 [4.00–6.00] | 7.00 [6.00–8.00] | – | – |")
	assert.Contains(t, b.String(), "| optest cold | 4.50 [3.60–5.40] | 5.00 [4.00–6.00] | 0.9 [0.9–0.9] | 0.714 [0.667–0.75] |")
}
