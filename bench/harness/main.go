// Command harness runs the benchmark suite that measures opgen side by side
// with controller-runtime on one local control plane, and writes the
// results (Markdown, JSON, PNG) to bench/results. Run it from the bench
// module:
//
//	cd bench && go run ./harness           # the full suite (make bench)
//	cd bench && go run ./harness -quick    # small N, 2 rounds: a smoke run
//	cd bench && go run ./harness -only coldstart,latency
//	cd bench && go run ./harness -compare v0.1.0,HEAD -only throughput   # two commits of opgen (make bench-compare)
//
// See bench/README.md for what each benchmark measures.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/testenv"
)

// benchmarks in the order they run.
var benchmarks = []string{"raw", "coldstart", "owned", "userchange", "throughput", "overhead", "latency", "steady", "failover", "webhook", "codegen", "binary", "shard", "testkit"}

type config struct {
	quick        bool
	rounds       int
	small, large int
	workers      int
	tpWorkers    []int
	tpRounds     int           // rounds of the throughput benchmark
	window       time.Duration // throughput and overhead measuring windows
	rawWindow    time.Duration
	rawRounds    int
	latencyRate  float64
	latencyFor   time.Duration
	steadyWindow time.Duration
	steadyPeriod time.Duration
	qps, burst   int
	watchList    bool
	cbor         bool // also the raw list + decode over CBOR
	codegenRuns  int
	// codegenKinds are the sizes of the synthetic APIs of the code
	// generation benchmark at scale; none skips it.
	codegenKinds string
	only         map[string]bool
	out          string
	keepLogs     bool
	failover     leaseTimings
	// shardN is the object count of the sharding benchmark.
	shardN     int
	stockLease leaseTimings
	replot     string
	// compare holds the git refs of sides A and B of a comparison ("" is
	// the working tree); nil outside one.
	compare []string
	// noise is the margin of a comparison's verdict: a row is better or
	// worse only when every round's ratio is beyond 1 by more.
	noise float64
}

func parseFlags() config {
	c := config{}
	quick := flag.Bool("quick", false, "small N, 2 rounds, short windows: a development run of a few minutes")
	rounds := flag.Int("rounds", 0, "rounds of each benchmark (default 5, 2 with -quick)")
	only := flag.String("only", "", "comma-separated benchmarks to run: "+strings.Join(benchmarks, ","))
	flag.StringVar(&c.out, "out", "results", "directory of the results")
	flag.BoolVar(&c.watchList, "watchlist", true, "KUBE_FEATURE_WatchListClient for both operators (client-go's default is on)")
	flag.BoolVar(&c.keepLogs, "keep-logs", false, "keep the operators' logs (printed path)")
	flag.StringVar(&c.replot, "replot", "", "write the Markdown and the chart again from this JSON of an earlier full run, without measuring")
	flag.BoolVar(&c.cbor, "cbor", false, "also measure the raw paged list + decode over CBOR (KEP-4222, alpha in Kubernetes 1.37: turns on the API server's CBORServingAndStorage gate and this process's ClientsAllowCBOR)")
	compare := flag.String("compare", "", "A,B: compare the opgen operator built at git refs A and B (B empty: the working tree), interleaved round by round; controller-runtime is not run (make bench-compare)")
	flag.Float64Var(&c.noise, "noise", 0.03, "with -compare: a row is better or worse only when every round's B/A is beyond 1 by more than this fraction")
	large := flag.Int("large", 0, "N of the large benchmarks (default 10000, 1000 with -quick); the waits on the operators grow with it (-large 100000: the 100,000-object scale run)")
	flag.Parse()
	c.quick = *quick
	if c.cbor {
		// read by client-go's feature gates on first use, after this
		_ = os.Setenv("KUBE_FEATURE_ClientsAllowCBOR", "true")
	}
	c.rounds, c.small, c.large = 5, 1000, 10000
	c.workers = 4
	c.tpWorkers = []int{1, 4, 16}
	// Status writes are judged on the median of at least 7 rounds: their
	// rates spread by a third from round to round on this machine.
	c.tpRounds = 7
	c.window, c.rawWindow, c.rawRounds = 3*time.Second, 2*time.Second, 3
	// 20 changes a second, each with its status write, keep the API server
	// of this machine at about a third of what it writes at 4 writers; at
	// 50/s the two writes of each change came near it on slow days, and
	// the percentiles measured the server's queue (p99 in seconds, for the
	// bare watch too). 20 s keeps the 400 samples of a round.
	c.latencyRate, c.latencyFor = 20, 20*time.Second
	c.steadyWindow, c.steadyPeriod = 12*time.Second, 3*time.Second
	c.qps, c.burst = 5000, 10000
	c.codegenRuns = 5
	c.codegenKinds = "10,50,200"
	c.shardN = 30000
	c.failover = leaseTimings{duration: 5 * time.Second, renew: 3 * time.Second, retry: time.Second}
	c.stockLease = leaseTimings{duration: 15 * time.Second, renew: 10 * time.Second, retry: 2 * time.Second}
	if c.quick {
		c.rounds, c.small, c.large = 2, 200, 1000
		c.tpRounds = 2
		c.window, c.rawWindow, c.rawRounds = 2*time.Second, time.Second, 1
		c.latencyFor, c.steadyWindow = 4*time.Second, 6*time.Second
		c.codegenRuns = 1
		c.codegenKinds = "10"
		c.shardN = 2000
	}
	if *rounds > 0 {
		c.rounds, c.tpRounds = *rounds, *rounds
	}
	if *large > 0 {
		c.large = *large
	}
	idleCap = c.scaled(idleCap)
	if *only != "" {
		c.only = map[string]bool{}
		for _, b := range strings.Split(*only, ",") {
			if !slices.Contains(benchmarks, b) {
				fmt.Fprintf(os.Stderr, "harness: -only %s: no such benchmark; pick from %s\n", b, strings.Join(benchmarks, ","))
				os.Exit(2)
			}
			c.only[b] = true
		}
	}
	if *compare != "" {
		var err error
		if c.compare, c.only, err = compareConfig(*compare, c.only); err != nil {
			fmt.Fprintln(os.Stderr, "harness:", err)
			os.Exit(2)
		}
	}
	return c
}

func (c config) runs(b string) bool { return c.only == nil || c.only[b] }

// comparing reports whether this run compares two commits of opgen.
func (c config) comparing() bool { return c.compare != nil }

// variants returns the variants a benchmark runs: vs, or in a comparison
// sides A and B in their place. The controller-runtime variants have no
// counterpart there (cr tuned and cr always pass flags an opgen binary
// does not take), so a comparison runs the two sides only.
func (s *suite) variants(vs ...string) []string {
	if s.cfg.comparing() {
		return []string{sideA, sideB}
	}
	return vs
}

// primary is the variant whose namespaces the raw client lists: opgen, or
// side A in a comparison (both sides' namespaces hold the same objects).
func (s *suite) primary() string { return s.variants(opgen)[0] }

// suite is one run of the benchmarks.
type suite struct {
	cfg        config
	moduleDir  string
	work       string
	logDir     string
	bins       map[string]string
	env        *testenv.Environment
	dyn        dynamic.Interface
	clusterDir string
	tmpfs      bool
	live       map[*proc]bool
	procSeq    int
	res        *results
	// worktrees are the checkouts of a comparison's refs, removed by
	// cleanup if the build did not remove them.
	worktrees []worktree
	// sideDirs are the checkouts of a comparison's sides, kept until the
	// end of the run when it compares code generation.
	sideDirs map[string]string
}

func main() {
	cfg := parseFlags()
	s := &suite{cfg: cfg, live: map[*proc]bool{}, res: newResults(cfg)}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if cfg.replot != "" {
		err = s.replot(cfg.replot)
	} else {
		err = s.run(ctx)
	}
	s.cleanup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
}

func (s *suite) run(ctx context.Context) error {
	start := time.Now()
	var err error
	if s.moduleDir, err = moduleDir(); err != nil {
		return err
	}
	if s.work, err = os.MkdirTemp("", "opgen-bench-work-"); err != nil {
		return err
	}
	s.logDir = filepath.Join(s.work, "logs")
	if err := os.MkdirAll(s.logDir, 0o755); err != nil {
		return err
	}
	s.res.machine(start)
	if s.cfg.comparing() {
		s.phase("build the operator at both refs", func() error { return s.buildSides(ctx) })
	} else {
		s.phase("build the operators", func() error { return s.build() })
		if sd, _, err := s.checkout(ctx, filepath.Dir(s.moduleDir), "", ""); err == nil {
			s.res.Commit = &sd
		} else {
			s.res.Errors = append(s.res.Errors, "the commit measured: "+err.Error())
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if len(s.bins) < 2 {
		return fmt.Errorf("the operators did not build: %v", s.res.Errors)
	}
	needCluster := false
	for _, b := range benchmarks {
		needCluster = needCluster || (b != "codegen" && b != "binary" && b != "testkit" && s.cfg.runs(b))
	}
	if needCluster {
		if err := s.phaseErr("start the control plane and create the objects", func() error { return s.setup(ctx) }); err != nil {
			return err
		}
		for _, b := range []struct {
			name string
			f    func(context.Context) error
		}{
			{"raw", s.benchRaw},
			{"coldstart", s.benchColdStart},
			{"owned", s.benchOwned},
			{"userchange", s.benchUserChange},
			{"throughput", s.benchThroughput},
			{"overhead", s.benchOverhead},
			{"latency", s.benchLatency},
			{"steady", s.benchSteady},
			{"failover", s.benchFailover},
			{"shard", s.benchShard},
			{"webhook", s.benchWebhook},
		} {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if s.cfg.runs(b.name) {
				s.phase(b.name, func() error { return b.f(ctx) })
				s.stopAll()
			} else if b.name == "raw" {
				if plan := s.rawPlan(); !plan.empty() {
					s.phase("raw bounds of the rows judged against them", func() error { return s.measureRaw(ctx, plan) })
				}
			}
		}
		s.stopCluster()
	}
	if s.cfg.runs("codegen") && ctx.Err() == nil {
		if s.cfg.comparing() {
			s.phase("codegen", func() error { return s.benchCodegenSides(ctx) })
		} else {
			s.phase("codegen", func() error { return s.benchCodegen(ctx) })
		}
	}
	if s.cfg.runs("binary") && ctx.Err() == nil {
		s.phase("binary", func() error { return s.benchBinary(ctx) })
	}
	// The test kits start control planes of their own: after the
	// harness's is stopped, so that it does not share the CPUs with them.
	if s.cfg.runs("testkit") && ctx.Err() == nil {
		s.phase("testkit", func() error { return s.benchTestkit(ctx) })
	}
	s.res.finish(start)
	return s.writeResults()
}

// phase runs f, logs its duration and records an error without stopping
// the suite.
func (s *suite) phase(name string, f func() error) { _ = s.phaseErr(name, f) }

func (s *suite) phaseErr(name string, f func() error) error {
	start, load := time.Now(), loadavg()
	logf("== %s (load average %s)", name, load)
	err := f()
	took := time.Since(start)
	s.res.Phases = append(s.res.Phases, phaseTime{Name: name, Seconds: took.Seconds(), LoadStart: load, LoadEnd: loadavg()})
	if err != nil {
		logf("!! %s failed after %v: %v", name, took.Round(time.Second), err)
		s.res.Errors = append(s.res.Errors, fmt.Sprintf("%s: %v", name, err))
		return err
	}
	logf("   %s took %v", name, took.Round(100*time.Millisecond))
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// build compiles the two operators (not measured).
func (s *suite) build() error {
	s.bins = map[string]string{}
	for fw, pkg := range map[string]string{opgen: "./operator/opgen", cr: "./operator/cr"} {
		bin := filepath.Join(s.work, "bin", fw)
		cmd := exec.Command("go", "build", "-o", bin, pkg)
		cmd.Dir = s.moduleDir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
		s.bins[fw] = bin
	}
	return nil
}

// setup starts the control plane, creates the namespaces and the objects.
func (s *suite) setup(ctx context.Context) error {
	if err := s.startCluster(ctx); err != nil {
		return err
	}
	var nss []string
	for _, fw := range s.variants(opgen, cr) {
		for _, size := range []string{"small", "large", "empty"} {
			nss = append(nss, namespace(fw, size))
		}
	}
	if err := s.createNamespaces(ctx, append(nss, rawNamespace, leaseNamespace)...); err != nil {
		return err
	}
	t := time.Now()
	type job struct {
		group, ns string
		n         int
	}
	jobs := []job{{opgenGroup, rawNamespace, s.cfg.small}}
	for _, v := range s.variants(opgen, cr) {
		jobs = append(jobs, job{groupOf(v), namespace(v, "small"), s.cfg.small})
	}
	if s.cfg.runs("coldstart") || s.cfg.runs("owned") || s.cfg.runs("userchange") {
		for _, v := range s.variants(opgen, cr) {
			jobs = append(jobs, job{groupOf(v), namespace(v, "large"), s.cfg.large})
		}
	}
	total := 0
	for _, j := range jobs {
		if err := s.populate(ctx, j.group, j.ns, j.n); err != nil {
			return err
		}
		total += j.n
	}
	logf("   created %d objects (2 appliers each) in %v", total, time.Since(t).Round(100*time.Millisecond))
	s.res.Setup = map[string]float64{"objects": float64(total), "seconds": time.Since(t).Seconds()}
	return s.measureObjectSize(ctx)
}

func (s *suite) adminConfig() *rest.Config {
	cfg := rest.CopyConfig(s.env.Config)
	cfg.QPS, cfg.Burst = float32(s.cfg.qps), s.cfg.burst
	return cfg
}

// stopAll stops every operator still running.
func (s *suite) stopAll() {
	for p := range s.live {
		if !p.exited() {
			p.stop()
		}
		delete(s.live, p)
	}
}

func (s *suite) cleanup() {
	for p := range s.live {
		if !p.exited() {
			p.kill()
		}
	}
	s.stopCluster()
	s.removeWorktrees()
	if s.work != "" {
		if s.cfg.keepLogs {
			logf("operator logs kept in %s", s.logDir)
		} else {
			_ = os.RemoveAll(s.work)
		}
	}
}

func moduleDir() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if filepath.Base(filepath.Dir(mod)) != "bench" {
		return "", fmt.Errorf("run the harness from the bench module (cd bench && go run ./harness); go.mod here is %s", mod)
	}
	return filepath.Dir(mod), nil
}

func metaOf(obj runtime.Object) (metaObject, error) { return meta.Accessor(obj) }

type metaObject = interface {
	GetName() string
	GetGeneration() int64
}

// order returns the variants rotated by round, so that no variant always
// runs first: A B, then B A, ...
func order(round int, variants ...string) []string {
	out := make([]string, len(variants))
	for i := range variants {
		out[i] = variants[(i+round)%len(variants)]
	}
	return out
}

// replot reads the JSON of an earlier run with the default settings and
// writes its Markdown and chart again, for a change to the report only.
func (s *suite) replot(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, s.res); err != nil {
		return err
	}
	if s.moduleDir, err = moduleDir(); err != nil {
		return err
	}
	s.tmpfs = s.res.Machine["etcdOnTmpfs"] != "false"
	return s.writeResults()
}

// scaledTo stretches a wait sized for 10,000 objects to n objects (never
// below d).
func (c config) scaledTo(n int, d time.Duration) time.Duration {
	return d * time.Duration(max(1, (n+9999)/10000))
}

// scaled stretches a wait sized for the default 10,000 objects to the
// large N of this run (never below d): a -large 100000 run lists, decodes
// and, in the owned benchmark, creates ten times as much.
func (c config) scaled(d time.Duration) time.Duration {
	if c.large <= 10000 {
		return d
	}
	return d * time.Duration((c.large+9999)/10000)
}
