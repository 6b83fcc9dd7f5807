package main

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestJudge(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name   string
		ratios []float64
		higher bool
		want   string
	}{
		{"every round higher, a rate", []float64{1.10, 1.05, 1.20}, true, verdictBetter},
		{"every round higher, a cost", []float64{1.10, 1.05, 1.20}, false, verdictWorse},
		{"every round lower, a cost", []float64{0.90, 0.80, 0.95}, false, verdictBetter},
		{"every round lower, a rate", []float64{0.90, 0.80, 0.95}, true, verdictWorse},
		{"one round against the others", []float64{1.20, 1.25, 0.99}, true, verdictNoise},
		{"every round higher, inside the margin", []float64{1.01, 1.02, 1.029}, true, verdictNoise},
		{"every round lower, inside the margin", []float64{0.99, 0.98, 0.972}, false, verdictNoise},
		{"just beyond the margin below", []float64{0.97, 0.96, 0.95}, false, verdictBetter},
		{"writes where there were none", []float64{inf, inf, inf}, false, verdictWorse},
		{"none on either side", []float64{1, 1, 1}, false, verdictNoise},
		{"two rounds", []float64{1.5, 1.6}, true, "not judged: 2 rounds (3 needed)"},
		{"no rounds", nil, true, verdictUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, judge(tc.ratios, tc.higher, 0.03))
		})
	}
}

func TestSideRatios(t *testing.T) {
	got := sideRatios([]float64{100, 0, 0, 50, 7}, []float64{120, 0, 3, 25})
	assert.Equal(t, []float64{1.2, 1, math.Inf(1), 0.5}, got, "round by round, as many as both sides have")
}

func TestCompareConfig(t *testing.T) {
	refs, only, err := compareConfig("v0.1.0", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"v0.1.0", ""}, refs, "B defaults to the working tree")
	assert.Len(t, only, len(comparable))
	assert.False(t, only["webhook"] || only["shard"])
	assert.True(t, only["codegen"], "code generation is built at each ref too")

	refs, _, err = compareConfig("e5021a6, . ", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"e5021a6", ""}, refs)

	refs, only, err = compareConfig("v0.1.0,HEAD", map[string]bool{"throughput": true})
	require.NoError(t, err)
	assert.Equal(t, []string{"v0.1.0", "HEAD"}, refs)
	assert.Equal(t, map[string]bool{"throughput": true}, only)

	_, _, err = compareConfig(",HEAD", nil)
	assert.ErrorContains(t, err, "A must be a git ref")
	_, _, err = compareConfig("a,b,c", nil)
	assert.ErrorContains(t, err, "want A,B")
	_, _, err = compareConfig("a,b", map[string]bool{"throughput": true, "webhook": true, "shard": true})
	assert.ErrorContains(t, err, "not shard,webhook")
}

func TestSideLabel(t *testing.T) {
	const commit = "e5021a6b2c3d4e5f60718293a4b5c6d7e8f90123"
	assert.Equal(t, "v0.1.0 (e5021a6)", side{Ref: "v0.1.0", Commit: commit}.label())
	assert.Equal(t, "e5021a6", side{Ref: "e5021a6", Commit: commit}.label())
	assert.Equal(t, "the working tree (e5021a6)", side{Commit: commit}.label())
	assert.Equal(t, "the working tree (e5021a6 + uncommitted changes)", side{Commit: commit, Dirty: true}.label())
}

// compareSuite is a comparison of throughput at 4 workers over three
// rounds, with the raw apply bound measured.
func compareSuite() *suite {
	cfg := config{rounds: 3, small: 1000, large: 10000, tpWorkers: []int{4}, noise: 0.03,
		compare: []string{"v0.1.0", "HEAD"}, only: map[string]bool{"throughput": true}}
	s := &suite{cfg: cfg, res: newResults(cfg)}
	s.res.Date = "2026-11-27"
	s.res.Machine = map[string]string{"cpus": "2", "loadavgAtStart": "5.84 4.01 4.75", "loadavgAtEnd": "3.10 3.50 4.20"}
	s.res.Sides = map[string]side{
		sideA: {Ref: "v0.1.0", Commit: "e5021a6b2c3d4e5f60718293a4b5c6d7e8f90123", Subject: "an old commit"},
		sideB: {Ref: "HEAD", Commit: "b028b89b2c3d4e5f60718293a4b5c6d7e8f90123", Subject: "a new commit"},
	}
	s.res.Phases = []phaseTime{{Name: "throughput", Seconds: 60, LoadStart: "5.84 4.01 4.75", LoadEnd: "3.10 3.50 4.20"}}
	for i, v := range []float64{100, 110, 105} {
		s.res.add("throughput.w4.writes", sideA, v)
		s.res.add("throughput.w4.writes", sideB, []float64{120, 125, 130}[i])
		s.res.add("throughput.w4.cpuPer1000", sideA, 1)
		s.res.add("throughput.w4.cpuPer1000", sideB, []float64{1.01, 0.99, 1}[i])
	}
	s.res.Raw[rawWrites(applyPatch, 4)] = []float64{190, 200, 210}
	return s
}

func TestCompareTable(t *testing.T) {
	s := compareSuite()
	got := s.compareTable()
	assert.Contains(t, got, "| row | A | B | B / A | verdict | load |")
	assert.Contains(t, got, "| status writes, 4 workers (/s) | 105 [100–110] | 125 [120–130] | 1.20 [1.14–1.24] | **better** | 5.84 → 3.10 |")
	assert.Contains(t, got, "| status writes, 4 workers, of the raw apply bound | 0.53 [0.50–0.55] | 0.62 [0.60–0.65] | 1.20 [1.14–1.24] | **better** | 5.84 → 3.10 |")
	assert.Contains(t, got, "| CPU per 1,000 writes, 4 workers (CPU s) | 1.00 [1.00–1.00] | 1.00 [0.99–1.01] | 1.00 [0.99–1.01] | within noise | 5.84 → 3.10 |")
	assert.NotContains(t, got, "start to all handled", "rows of benchmarks not run are left out")
	assert.Equal(t, 3+2, strings.Count(got, "\n"), "a head, its rule and the three rows of 4 workers")
}

func TestCompareTableWorse(t *testing.T) {
	s := compareSuite()
	s.res.Metrics["throughput.w4.cpuPer1000"][sideB] = []float64{1.2, 1.1, 1.3}
	assert.Contains(t, s.compareTable(), "| CPU per 1,000 writes, 4 workers (CPU s) | 1.00 [1.00–1.00] | 1.20 [1.10–1.30] | 1.20 [1.10–1.30] | **worse** |")
}

func TestCompareMarkdown(t *testing.T) {
	got := compareSuite().compareMarkdown("2026-11-27-compare-e5021a6-b028b89")
	assert.Contains(t, got, "go run ./harness -compare v0.1.0,HEAD -only throughput -rounds 3`", "the command that reruns it")
	assert.Contains(t, got, `- **A**: v0.1.0 (e5021a6), commit e5021a6b2c3d4e5f60718293a4b5c6d7e8f90123, "an old commit"`)
	assert.Contains(t, got, `- **B**: HEAD (b028b89), commit b028b89b2c3d4e5f60718293a4b5c6d7e8f90123, "a new commit"`)
	assert.Contains(t, got, "load average 5.84 4.01 4.75 at the start, 3.10 3.50 4.20 at the end")
	assert.Contains(t, got, "beyond 1 on the same side by more than 3%")
	assert.Contains(t, got, "| status writes, 4 workers (/s) |")
	assert.Contains(t, got, "| 4 | – | 200 [190–210] | – |", "the raw bound it was judged against")
	assert.Contains(t, got, "| throughput | 60 | 5.84 4.01 4.75 | 3.10 3.50 4.20 |")
	for _, word := range []string{"opgen / cr", "controller-runtime /", "| opgen |", "| cr |"} {
		assert.NotContains(t, got, word, "the sides are A and B")
	}
}

// TestWorktrees checks out a commit of a repository for a side's build
// and removes the checkout and its registration afterwards.
func TestWorktrees(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH: the test makes a repository and a worktree with it; install git to run it")
	}
	root := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		out, err := git(context.Background(), root, args...)
		require.NoError(t, err)
		return out
	}
	run("init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(root, "f.txt"), []byte("one\n"), 0o644))
	run("add", "f.txt")
	run("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "first")
	run("tag", "v1")
	require.NoError(t, os.WriteFile(filepath.Join(root, "f.txt"), []byte("two\n"), 0o644))

	s := &suite{}
	sd, dir, err := s.checkout(context.Background(), root, sideA, "v1")
	require.NoError(t, err)
	assert.Equal(t, "first", sd.Subject)
	data, err := os.ReadFile(filepath.Join(dir, "f.txt"))
	require.NoError(t, err)
	assert.Equal(t, "one\n", string(data), "the commit, not the working tree")
	assert.Len(t, strings.Split(run("worktree", "list"), "\n"), 2)

	wt, dir2, err := s.checkout(context.Background(), root, sideB, "")
	require.NoError(t, err)
	assert.Equal(t, root, dir2, "the working tree builds where it is")
	assert.True(t, wt.Dirty)

	tmp := s.worktrees[0].tmp
	s.removeWorktrees()
	assert.NoDirExists(t, tmp)
	assert.Len(t, strings.Split(run("worktree", "list"), "\n"), 1, "no worktree left registered")
	assert.Empty(t, s.worktrees)

	_, _, err = s.checkout(context.Background(), root, sideA, "no-such-ref")
	assert.ErrorContains(t, err, "rev-parse")
}

// TestCompareName: compares of the same commits over other benchmarks
// write files of their own.
func TestCompareName(t *testing.T) {
	s := compareSuite()
	assert.Equal(t, "2026-11-27-compare-e5021a6-b028b89-throughput", s.compareName())
	s.cfg.only = map[string]bool{"userchange": true, "coldstart": true}
	assert.Equal(t, "2026-11-27-compare-e5021a6-b028b89-coldstart-userchange", s.compareName(), "in the harness's order")
	s.cfg.only = nil
	s.cfg.quick = true
	assert.Equal(t, "2026-11-27-compare-e5021a6-b028b89-quick", s.compareName())
}
