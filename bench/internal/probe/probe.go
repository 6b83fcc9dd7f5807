// Package probe is the instrumentation that both operators under test carry,
// the same code in each, so that what the harness reads from them costs
// both the same: the command-line flags they share, a count of reconciles
// and, until every expected object was reconciled, of the distinct objects
// seen, a count of the API writes their client makes (by verb and
// resource) and of the time they took, trace lines on stdout, and an HTTP
// endpoint with those counters, allocations, the Go heap after a forced
// GC, and pprof's heap and CPU profiles (for investigating a result).
//
// Protocol on stdout, one line each:
//
//	probe <host:port>           the stats endpoint, printed first
//	all <unixnano>              every expected object was reconciled once
//	rec <name> <generation> <unixnano>   (with -trace) a reconcile started
package probe

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"runtime/metrics"
	rpprof "runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Modes of the handler.
const (
	// ModeNoop reads the object and does nothing else.
	ModeNoop = "noop"
	// ModeStatus sets status.observedGeneration and a new status.heartbeat
	// on every reconcile: one status write each.
	ModeStatus = "status"
	// ModeOwned declares one ConfigMap per object, derived from its spec,
	// and status.phase Ready: writes only when something differs.
	ModeOwned = "owned"
)

// Flags configure an operator under test. Both operators take the same
// flags with the same meaning.
type Flags struct {
	Kubeconfig  string
	Namespace   string
	Mode        string
	Workers     int
	QPS         float64
	Burst       int
	Requeue     time.Duration
	Expect      int64
	Trace       bool
	ProbeAddr   string
	Variant     string
	StatusWrite string
	KeepSpec    bool

	LeaderElect    bool
	Sharding       bool
	LeaseNamespace string
	LeaseName      string
	Identity       string
	LeaseDuration  time.Duration
	RenewDeadline  time.Duration
	RetryPeriod    time.Duration
}

// BindFlags binds f to the command line.
func (f *Flags) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "kubeconfig of the API server")
	fs.StringVar(&f.Namespace, "namespace", "", "the one namespace to watch")
	fs.StringVar(&f.Mode, "mode", ModeNoop, "handler: noop, status or owned")
	fs.IntVar(&f.Workers, "workers", 2, "concurrent reconciles")
	fs.Float64Var(&f.QPS, "qps", 5000, "client QPS")
	fs.IntVar(&f.Burst, "burst", 10000, "client burst")
	fs.DurationVar(&f.Requeue, "requeue", 0, "ask for another reconcile of each object this long after each reconcile (0: none)")
	fs.Int64Var(&f.Expect, "expect", 0, "print 'all' once this many distinct objects were reconciled")
	fs.BoolVar(&f.Trace, "trace", false, "print a 'rec' line at the start of every reconcile")
	fs.StringVar(&f.ProbeAddr, "probe-addr", "127.0.0.1:0", "address of the stats endpoint")
	fs.StringVar(&f.Variant, "variant", "stock", "controller-runtime only: stock, or tuned (managedFields stripped, lease released on cancel)")
	fs.StringVar(&f.StatusWrite, "status-write", "changed", "controller-runtime only, owned mode: patch the status when it changed, or always")
	fs.BoolVar(&f.KeepSpec, "keep-spec", false, "opgen only: cache the spec fields the owned mode reads in every mode (the harness measures a Load as the owned mode caches it)")
	fs.BoolVar(&f.LeaderElect, "leader-elect", false, "leader election")
	fs.BoolVar(&f.Sharding, "sharding", false, "opgen only: spread the objects over the replicas (runtime.Options.Sharding)")
	fs.StringVar(&f.LeaseNamespace, "lease-namespace", "", "namespace of the Lease (default: -namespace)")
	fs.StringVar(&f.LeaseName, "lease-name", "bench-lease", "name of the Lease")
	fs.StringVar(&f.Identity, "identity", "", "leader election identity (default: hostname_pid)")
	fs.DurationVar(&f.LeaseDuration, "lease-duration", 15*time.Second, "lease duration")
	fs.DurationVar(&f.RenewDeadline, "renew-deadline", 10*time.Second, "renew deadline")
	fs.DurationVar(&f.RetryPeriod, "retry-period", 2*time.Second, "retry period")
}

// Complete fills defaults that depend on other flags.
func (f *Flags) Complete() {
	if f.LeaseNamespace == "" {
		f.LeaseNamespace = f.Namespace
	}
	if f.Identity == "" {
		h, _ := os.Hostname()
		f.Identity = h + "_" + strconv.Itoa(os.Getpid())
	}
}

// Probe counts what the harness reads. Make one with Start.
type Probe struct {
	flags      Flags
	reconciles atomic.Int64
	distinct   atomic.Int64
	allAt      atomic.Int64
	heartbeat  atomic.Int64

	// seen holds the keys of the objects reconciled until Expect of them
	// were; then it is dropped. Nothing reads it after, and a set of every
	// object kept for good would count in the heap per cached object the
	// harness measures, as much in either framework's operator (about 150
	// bytes an object as the sync.Map it was; bench/README.md).
	seenMu sync.Mutex
	seen   map[string]struct{}

	mu     sync.Mutex
	out    *bufio.Writer
	marked map[string]bool // the names Mark printed
	// stopProfile ends the start's CPU profile (EnvStartProfiles).
	stopProfile func()
	writes      sync.Map // "VERB resource[/subresource]" → *atomic.Int64
	// writeNanos is the same keys → *atomic.Int64: the time from sending
	// each write to its response's headers.
	writeNanos sync.Map
}

// Start serves the stats endpoint and prints its address.
func Start(f Flags) (*Probe, error) {
	p := newProbe(f, os.Stdout)
	ln, err := net.Listen("tcp", f.ProbeAddr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(p.Stats(r.URL.Query().Get("gc") == "1"))
	})
	mux.Handle("/debug/pprof/heap", pprof.Handler("heap"))
	mux.Handle("/debug/pprof/profile", http.HandlerFunc(pprof.Profile))
	go func() { _ = http.Serve(ln, mux) }()
	p.line("probe " + ln.Addr().String())
	if dir := os.Getenv(EnvStartProfiles); dir != "" && f.Expect > 0 {
		p.profileStart(filepath.Join(dir, fmt.Sprintf("start-%s-%d.pprof", f.Namespace, os.Getpid())))
	}
	return p, nil
}

// EnvStartProfiles names a directory where an operator started with
// -expect writes a CPU profile of its start: from Start to the "all" line
// (for investigating a cold start; the HTTP profile endpoint cannot reach
// back to the exec).
const EnvStartProfiles = "BENCH_START_PROFILES"

// profileStart profiles the CPU into path until every expected object was
// reconciled; a failure is printed on stderr and profiles nothing.
func (p *Probe) profileStart(path string) {
	f, err := os.Create(path)
	if err == nil {
		err = rpprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "start profile: %v\n", err)
		return
	}
	p.stopProfile = func() {
		rpprof.StopCPUProfile()
		_ = f.Close()
	}
}

func newProbe(f Flags, out io.Writer) *Probe {
	p := &Probe{flags: f, out: bufio.NewWriter(out)}
	if f.Expect > 0 {
		p.seen = map[string]struct{}{}
	}
	return p
}

// RESTConfig loads the kubeconfig with the flags' rate limits and a
// transport that counts writes.
func (p *Probe) RESTConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", p.flags.Kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = float32(p.flags.QPS), p.flags.Burst
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return countWrites{rt, p} }
	return cfg, nil
}

// Reconciled records the start of a reconcile of namespace/name at
// generation gen.
func (p *Probe) Reconciled(namespace, name string, gen int64) {
	p.reconciles.Add(1)
	if p.flags.Expect > 0 && p.allAt.Load() == 0 {
		p.count(namespace + "/" + name)
	}
	if p.flags.Trace {
		p.line(fmt.Sprintf("rec %s %d %d", name, gen, time.Now().UnixNano()))
	}
}

// count adds key to the distinct objects reconciled and, at the Expect-th,
// prints the "all" line and drops the set.
func (p *Probe) count(key string) {
	p.seenMu.Lock()
	defer p.seenMu.Unlock()
	if _, dup := p.seen[key]; dup || p.seen == nil {
		return
	}
	p.seen[key] = struct{}{}
	p.distinct.Store(int64(len(p.seen)))
	if int64(len(p.seen)) == p.flags.Expect {
		p.seen = nil
		now := time.Now().UnixNano()
		p.allAt.Store(now)
		p.line("all " + strconv.FormatInt(now, 10))
		if p.stopProfile != nil {
			p.stopProfile()
		}
	}
}

// Heartbeat returns a new value for status.heartbeat, never returned before
// by this process.
func (p *Probe) Heartbeat() int64 { return time.Now().UnixNano()/1000 + p.heartbeat.Add(1) }

func (p *Probe) line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out.WriteString(s)
	p.out.WriteByte('\n')
	p.out.Flush()
}

// Stats is what the endpoint answers.
type Stats struct {
	Reconciles int64 `json:"reconciles"`
	// Distinct is the number of distinct objects reconciled, counted
	// until Expect of them were (not at all without Expect).
	Distinct int64 `json:"distinct"`
	AllAt    int64 `json:"allAt,omitempty"`
	// AllocObjects and AllocBytes are cumulative heap allocations.
	AllocObjects uint64 `json:"allocObjects"`
	AllocBytes   uint64 `json:"allocBytes"`
	// HeapBytes is the bytes of live and not yet swept heap objects;
	// after a forced GC (gc=1) it is the live heap.
	HeapBytes uint64 `json:"heapBytes"`
	// Writes counts API requests other than get, list and watch, by
	// "VERB resource" (resource/subresource for subresources).
	Writes map[string]int64 `json:"writes"`
	// WriteNanos is the time the writes of Writes took, summed by the same
	// keys: from sending each request to its response's headers. Beside a
	// window's length it splits a worker's time into waiting for the API
	// server and the rest.
	WriteNanos map[string]int64 `json:"writeNanos"`
}

// Stats reads the counters; with gc it first collects garbage twice and
// returns freed memory to the OS, so HeapBytes is the live heap.
func (p *Probe) Stats(gc bool) Stats {
	if gc {
		goruntime.GC()
		goruntime.GC()
		debug.FreeOSMemory()
	}
	samples := []metrics.Sample{
		{Name: "/gc/heap/allocs:objects"},
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
	}
	metrics.Read(samples)
	s := Stats{
		Reconciles:   p.reconciles.Load(),
		Distinct:     p.distinct.Load(),
		AllAt:        p.allAt.Load(),
		AllocObjects: samples[0].Value.Uint64(),
		AllocBytes:   samples[1].Value.Uint64(),
		HeapBytes:    samples[2].Value.Uint64(),
		Writes:       map[string]int64{},
		WriteNanos:   map[string]int64{},
	}
	p.writes.Range(func(k, v any) bool {
		s.Writes[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	p.writeNanos.Range(func(k, v any) bool {
		s.WriteNanos[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return s
}

// countWrites counts requests that change something, by verb and resource.
type countWrites struct {
	next http.RoundTripper
	p    *Probe
}

func (c countWrites) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return c.next.RoundTrip(r)
	}
	key := r.Method + " " + resourceOf(r.URL.Path)
	counter(&c.p.writes, key).Add(1)
	t := time.Now()
	resp, err := c.next.RoundTrip(r)
	counter(&c.p.writeNanos, key).Add(int64(time.Since(t)))
	return resp, err
}

func counter(m *sync.Map, key string) *atomic.Int64 {
	v, ok := m.Load(key)
	if !ok {
		v, _ = m.LoadOrStore(key, new(atomic.Int64))
	}
	return v.(*atomic.Int64)
}

// resourceOf returns "resource" or "resource/subresource" of an API path:
// /apis/g/v/namespaces/ns/loads/x/status → loads/status.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) > 0 && parts[0] == "api":
		parts = parts[min(2, len(parts)):]
	case len(parts) > 0 && parts[0] == "apis":
		parts = parts[min(3, len(parts)):]
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	switch len(parts) {
	case 0:
		return "namespaces"
	case 1, 2:
		return parts[0]
	default:
		return parts[0] + "/" + parts[2]
	}
}

// Mark prints "mark <name> <unix nanoseconds>" the first time it is
// called with name: a moment of the operator's start the harness times
// from its exec (the cold start's phases).
func (p *Probe) Mark(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.marked[name] {
		return
	}
	if p.marked == nil {
		p.marked = map[string]bool{}
	}
	p.marked[name] = true
	fmt.Fprintf(p.out, "mark %s %d\n", name, time.Now().UnixNano())
	p.out.Flush()
}

// Lead records that this replica became the leader.
func (p *Probe) Lead() { p.line("lead " + strconv.FormatInt(time.Now().UnixNano(), 10)) }
