package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/opgen-sdk/opgen/bench/testkit"
	"github.com/opgen-sdk/opgen/internal/controlplane"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

// The variants of the testkit benchmark. envtest starts etcd and
// kube-apiserver in every test package, so it has no warm variant.
const (
	kitEnvtest = "envtest"
	kitCold    = "optest cold"
	kitWarm    = "optest warm"
)

// testkitTests is how many tests each test package has.
const testkitTests = testkit.Tests

// testkitPackages are the benchmark's test packages, by kit.
var testkitPackages = map[string]string{"envtest": "./testkit/envtestkit", "optest": "./testkit/optestkit"}

const (
	// testkitTimeout bounds one run of a test binary: envtest gives each
	// server 20 s to start, testenv 60 s; on a loaded machine a run takes
	// 10 s.
	testkitTimeout = 3 * time.Minute
	// supervisorIdle is OPGEN_TESTENV_IDLE for the optest runs. The harness
	// stops each shared control plane itself after the warm run; this is
	// the safety net should the harness die first, and it outlasts the wait
	// for an idle machine (at most idleCap) between the cold and warm runs.
	supervisorIdle = 2 * time.Minute
)

// kitBench is one run of the testkit benchmark. Every file and every
// process it starts lives under root (TMPDIR of the test binaries, the
// shared control planes' directories), which is how it finds what is left.
type kitBench struct {
	s      *suite
	root   string
	assets string            // the control-plane binaries
	bins   map[string]string // test binary by kit
}

// benchTestkit compares the start of opgen's test kit (optest on the
// shared control plane of pkg/testenv) with controller-runtime's envtest:
// from exec of a test binary to its first test's body, and the whole
// binary of 20 small tests. Round by round, the kits alternate; opgen runs
// cold (a fresh shared-state directory: it starts the supervisor and its
// control plane) and then warm (the same directory, that control plane
// still up, as for the second package of a `go test ./...`).
func (s *suite) benchTestkit(ctx context.Context) (err error) {
	k, err := s.testkitSetup(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if left := k.cleanup(); len(left) > 0 && err == nil {
			err = fmt.Errorf("killed what the test kits left running: %s", strings.Join(left, "; "))
		}
	}()
	for r := range s.cfg.rounds {
		m := s.res.mark()
		if err := k.round(ctx, r); err != nil {
			s.res.rollback(m) // ratios are taken round by round: no half round
			return fmt.Errorf("round %d: %w", r+1, err)
		}
	}
	return nil
}

// testkitSetup finds the control-plane binaries and compiles the two test
// packages (neither is timed).
func (s *suite) testkitSetup(ctx context.Context) (*kitBench, error) {
	// Ensure is how pkg/testenv finds them: $OPGEN_CONTROLPLANE_DIR or the
	// versioned directory in the opgen cache, built there when missing
	// (it says so, and how long it takes).
	b, err := controlplane.Ensure(ctx, os.Stderr)
	if err != nil {
		return nil, err
	}
	k := &kitBench{s: s, root: filepath.Join(s.work, "testkit"), assets: filepath.Dir(b.APIServer), bins: map[string]string{}}
	if err := os.MkdirAll(k.root, 0o755); err != nil {
		return nil, err
	}
	logf("   control-plane binaries: %s; compiling the two test packages", k.assets)
	for kit, pkg := range testkitPackages {
		bin := filepath.Join(s.work, "bin", "testkit-"+kit+".test")
		cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, pkg)
		cmd.Dir = s.moduleDir
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go test -c %s: %v\n%s", pkg, err, out)
		}
		k.bins[kit] = bin
	}
	return k, nil
}

// round runs envtest once and optest cold and warm, the kits' order
// alternating from round to round, and checks that nothing is left
// running.
func (k *kitBench) round(ctx context.Context, r int) error {
	for _, kit := range order(r, "envtest", "optest") {
		var err error
		if kit == "envtest" {
			err = k.measure(ctx, r, kitEnvtest, "starts etcd and kube-apiserver", "KUBEBUILDER_ASSETS="+k.assets)
		} else {
			err = k.optest(ctx, r)
		}
		if err != nil {
			return err
		}
	}
	if left := k.sweep(); len(left) > 0 {
		return fmt.Errorf("left running after the round, killed: %s", strings.Join(left, "; "))
	}
	return nil
}

// optest runs the optest binary twice on a shared-state directory of this
// round's own: cold (no shared control plane there yet) and warm (the one
// the cold run started), then stops that control plane.
func (k *kitBench) optest(ctx context.Context, r int) error {
	shared := filepath.Join(k.root, fmt.Sprintf("shared-%d", r+1))
	env := []string{
		testenv.EnvShared + "=1", // whatever the harness's own environment says
		testenv.EnvSharedDir + "=" + shared,
		testenv.EnvIdle + "=" + supervisorIdle.String(),
	}
	if err := k.measure(ctx, r, kitCold, "starts the shared control plane: its supervisor, etcd, kube-apiserver, the namespace controller", env...); err != nil {
		return err
	}
	if _, _, ok := liveSupervisor(shared); !ok {
		return fmt.Errorf("the cold run left no shared control plane running in %s, so the warm run would start one; see %s", shared, filepath.Join(shared, "supervisor.log"))
	}
	if err := k.measure(ctx, r, kitWarm, "joins the running shared control plane", env...); err != nil {
		return err
	}
	return stopSupervisor(shared)
}

// measure runs the test binary of variant's kit once, after the machine
// went idle, and records the time from exec to the first test's body and
// to the binary's exit.
func (k *kitBench) measure(ctx context.Context, r int, variant, what string, env ...string) error {
	kit, _, _ := strings.Cut(variant, " ")
	dir, err := os.MkdirTemp(k.root, strings.ReplaceAll(variant, " ", "-")+"-")
	if err != nil {
		return err
	}
	tmp, first := filepath.Join(dir, "tmp"), filepath.Join(dir, "first")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, testkitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.bins[kit])
	cmd.Dir = filepath.Join(k.s.moduleDir, testkitPackages[kit]) // where go test runs it
	cmd.Env = append(os.Environ(), append([]string{testkit.EnvFirst + "=" + first, "TMPDIR=" + tmp}, env...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	waitIdle()
	logf("   round %d/%d, %s: %d tests (%s; at most %v)", r+1, k.s.cfg.rounds, variant, testkitTests, what, testkitTimeout)
	start := time.Now()
	err = cmd.Run()
	total := time.Since(start)
	if err != nil {
		return fmt.Errorf("%s: the test binary failed (%v); the end of its output:\n%s", variant, err, lastLines(out.String(), 20))
	}
	at, err := readFirst(first)
	if err != nil {
		return fmt.Errorf("%s: %w; its output:\n%s", variant, err, lastLines(out.String(), 20))
	}
	firstTest := at.Sub(start)
	k.s.res.add("testkit.first.seconds", variant, firstTest.Seconds())
	k.s.res.add("testkit.total.seconds", variant, total.Seconds())
	logf("   %s: first test after %v, all %d after %v", variant, firstTest.Round(time.Millisecond), testkitTests, total.Round(time.Millisecond))
	return nil
}

// readFirst reads the time the first test wrote (testkit.EnvFirst).
func readFirst(path string) (time.Time, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, fmt.Errorf("the first test wrote no start time (%v): did the tests run, or skip?", err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("the first test's start time %q in %s is not Unix nanoseconds", data, path)
	}
	return time.Unix(0, ns), nil
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// cleanup stops the shared control planes still running under root and
// kills any other process left there; it returns what it had to kill.
func (k *kitBench) cleanup() []string {
	dirs, _ := filepath.Glob(filepath.Join(k.root, "shared-*"))
	for _, d := range dirs {
		if err := stopSupervisor(d); err != nil {
			logf("   %v", err)
		}
	}
	return k.sweep()
}
