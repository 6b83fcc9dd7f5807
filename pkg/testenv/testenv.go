package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/internal/controlplane"
)

// Options configure an Environment. The zero value is a working
// configuration: free ports, a fresh temporary directory, binaries from the
// control-plane cache (built when missing), no controller manager.
type Options struct {
	// BinDir holds etcd, kube-apiserver and kube-controller-manager. Empty
	// means the control-plane cache, built on first use (see
	// internal/controlplane); a directory set here is used as it is.
	BinDir string

	// Dir is where data, certificates, logs and the kubeconfig go. Empty
	// means a new temporary directory, removed by Stop.
	Dir string

	// APIServerPort and EtcdPort pin ports on 127.0.0.1; 0 picks free ones.
	APIServerPort int
	EtcdPort      int

	// ControllerManager also runs kube-controller-manager with the
	// controllers named in Controllers, so owned objects are garbage
	// collected and Deployments get ReplicaSets as in a real cluster.
	ControllerManager bool

	// Controllers overrides the kube-controller-manager controllers.
	// Default: DefaultControllers.
	Controllers []string

	// CRDDirs are installed after start-up; Start returns once every CRD in
	// them is Established and served.
	CRDDirs []string

	// StartTimeout bounds the wait for etcd and the apiserver to be ready.
	// Default: 60s.
	StartTimeout time.Duration

	// APIServerFlags are added to the kube-apiserver command line, as
	// "--name=value" strings; one that names a flag testenv sets replaces it.
	APIServerFlags []string

	// Private keeps this package's control plane to itself: Main and
	// StartShared start one of its own instead of sharing one with other
	// test packages. Packages whose tests stop, restart or otherwise break
	// the servers (StopAPIServer, StopEtcd, fault injection) must set it.
	// Start always starts a private control plane.
	Private bool

	// Exclusive names the cluster-scoped things this package's tests must
	// not share with another package's tests running at the same time, such
	// as an operator's ClusterRoles or the CRDs its controllers watch
	// cluster-wide (the CRDs in CRDDirs are added). Any string works; what
	// counts is that packages that would clash name the same one. On the
	// shared control plane, a package that finds one of its names held by a
	// live package starts a private control plane instead.
	Exclusive []string

	// Output receives progress (the first control-plane build) and, from
	// Main, start-up messages. Default: os.Stderr.
	Output io.Writer
}

// DefaultControllers are the kube-controller-manager controllers an operator
// test needs: garbage collection, the workload controllers and the namespace
// and service-account controllers that make namespaces usable.
var DefaultControllers = []string{
	"garbage-collector-controller",
	"deployment-controller",
	"replicaset-controller",
	"statefulset-controller",
	"job-controller",
	"namespace-controller",
	"serviceaccount-controller",
	"clusterrole-aggregation-controller",
}

// Environment is a running local control plane: etcd, kube-apiserver and
// optionally kube-controller-manager, with authentication and RBAC on.
type Environment struct {
	// Config authenticates as an admin (group system:masters).
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for the admin identity.
	Kubeconfig string
	// Dir holds data, logs, certificates and the kubeconfig.
	Dir string
	// Binaries are the executables the environment runs.
	Binaries controlplane.Binaries

	opts      Options
	ownDir    bool
	spawner   *spawner
	etcd      *process
	apiserver *process
	kcm       *process
	creds     *credentials
	stopOnce  sync.Once

	mu                          sync.Mutex // guards the processes for Stop*/Restart*
	etcdPort, peerPort, apiPort int

	clientset kubernetes.Interface
	shared    *sharedUse // set when the servers are the shared control plane's
}

// New returns an environment that is not started yet. Start it with Start,
// or with Main from TestMain.
func New(opts Options) *Environment {
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 60 * time.Second
	}
	if opts.Output == nil {
		opts.Output = os.Stderr
	}
	if opts.ControllerManager && len(opts.Controllers) == 0 {
		opts.Controllers = DefaultControllers
	}
	return &Environment{opts: opts}
}

// Start starts etcd, kube-apiserver and, when asked, kube-controller-manager,
// waits until the apiserver answers /readyz, writes the kubeconfig and
// installs the CRDs. On error everything started is stopped again.
func (e *Environment) Start(ctx context.Context) (err error) {
	if e.Config != nil {
		return errors.New("testenv: environment already started")
	}
	if err := e.resolveBinaries(ctx); err != nil {
		return err
	}
	if err := e.prepareDir(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			e.stop(time.Second) // a server that failed to start may ignore SIGTERM
		}
	}()
	creds, err := newCredentials(e.Dir)
	if err != nil {
		return fmt.Errorf("testenv: create certificates: %w", err)
	}
	e.creds = creds
	e.spawner = newSpawner()
	ctx, cancel := context.WithTimeout(ctx, e.opts.StartTimeout)
	defer cancel()
	if err := e.startServers(ctx); err != nil {
		return err
	}
	if err := e.writeKubeconfig(); err != nil {
		return err
	}
	// CRDs go in before the controller manager starts: its garbage
	// collector learns about new resources only on its discovery resync,
	// every 30 seconds, and would collect their dependents that late.
	for _, dir := range e.opts.CRDDirs {
		if err := e.InstallCRDs(ctx, dir); err != nil {
			return err
		}
	}
	if e.opts.ControllerManager {
		return e.startControllerManager()
	}
	return nil
}

func (e *Environment) resolveBinaries(ctx context.Context) error {
	if e.opts.BinDir != "" {
		e.Binaries = controlplane.In(e.opts.BinDir)
		if missing := e.Binaries.Missing(); len(missing) > 0 {
			return fmt.Errorf("testenv: Options.BinDir %s lacks %s; build them with `make controlplane` and leave BinDir empty to use the cache",
				e.opts.BinDir, strings.Join(missing, ", "))
		}
		return nil
	}
	b, err := controlplane.Ensure(ctx, e.opts.Output)
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	e.Binaries = b
	return nil
}

func (e *Environment) prepareDir() error {
	if e.opts.Dir != "" {
		e.Dir = e.opts.Dir
		return os.MkdirAll(e.Dir, 0o700)
	}
	removeStaleDirs()
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return fmt.Errorf("testenv: create a temporary directory: %w (set TMPDIR to a writable directory)", err)
	}
	e.Dir, e.ownDir = dir, true
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600)
}

// startServers starts etcd and the apiserver, retrying with new ports when
// a free port chosen for them was taken before they bound it.
func (e *Environment) startServers(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		err := e.tryStartServers(ctx)
		if err == nil {
			return nil
		}
		conflict := e.etcd.bindConflict() || e.apiserver.bindConflict()
		pinned := e.opts.EtcdPort != 0 || e.opts.APIServerPort != 0
		if !conflict || pinned || attempt == 3 {
			return err
		}
		e.apiserver.stop(5 * time.Second)
		e.etcd.stop(5 * time.Second)
	}
}

func (e *Environment) tryStartServers(ctx context.Context) error {
	etcdPort, err := port(e.opts.EtcdPort, "EtcdPort")
	if err != nil {
		return err
	}
	peerPort, err := port(0, "")
	if err != nil {
		return err
	}
	apiPort, err := port(e.opts.APIServerPort, "APIServerPort")
	if err != nil {
		return err
	}
	e.etcdPort, e.peerPort, e.apiPort = etcdPort, peerPort, apiPort
	if e.etcd, err = e.startEtcd(etcdPort, peerPort); err != nil {
		return err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	if err := waitFor(ctx, e.etcd, func(ctx context.Context) error { return etcdHealthy(ctx, etcdURL) }); err != nil {
		return err
	}
	if e.apiserver, err = e.startAPIServer(apiPort, etcdURL); err != nil {
		return err
	}
	e.Config = e.adminConfig("https://127.0.0.1:" + strconv.Itoa(apiPort))
	e.clientset, err = kubernetes.NewForConfig(e.Config)
	if err != nil {
		return err
	}
	return waitFor(ctx, e.apiserver, e.apiserverReady)
}

func (e *Environment) startEtcd(clientPort, peerPort int) (*process, error) {
	client := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peer := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	return e.spawner.run("etcd", e.Binaries.Etcd, e.Dir,
		"--name=default",
		"--data-dir="+filepath.Join(e.Dir, "etcd"),
		"--listen-client-urls="+client,
		"--advertise-client-urls="+client,
		"--listen-peer-urls="+peer,
		"--initial-advertise-peer-urls="+peer,
		"--initial-cluster=default="+peer,
		"--unsafe-no-fsync=true", // a throwaway cluster: durability buys nothing here
		"--log-level=warn",
	)
}

func (e *Environment) startAPIServer(port int, etcdURL string) (*process, error) {
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none", // loopback cannot be a Service endpoint
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + e.creds.servingCert,
		"--tls-private-key-file=" + e.creds.servingKey,
		"--client-ca-file=" + e.creds.caFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + e.creds.saVerifyingKey,
		"--service-account-signing-key-file=" + e.creds.saSigningKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--allow-privileged=true",
		"--profiling=false",
		"--cert-dir=" + filepath.Join(e.Dir, "apiserver-certs"),
	}
	return e.spawner.run("kube-apiserver", e.Binaries.APIServer, e.Dir, mergeFlags(args, e.opts.APIServerFlags)...)
}

func (e *Environment) startControllerManager() error {
	var err error
	e.kcm, err = e.spawner.run("kube-controller-manager", e.Binaries.ControllerManager, e.Dir,
		"--kubeconfig="+e.Kubeconfig,
		"--controllers="+strings.Join(e.opts.Controllers, ","),
		"--leader-elect=false",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		"--root-ca-file="+e.creds.caFile,
		"--concurrent-gc-syncs=5",
	)
	return err
}

// Stop stops kube-controller-manager, then the apiserver, then etcd (the
// apiserver hangs on shutdown when etcd goes first), kills what is left of
// their process groups and removes the temporary directory. It is safe to
// call more than once and on a partly started environment. It takes
// seconds: the apiserver, which drains open watches for up to a minute on
// SIGTERM, is killed after stopGrace (its data is etcd's).
func (e *Environment) Stop() { e.stop(stopGrace) }

// stopGrace is how long a server may take to exit on SIGTERM before Stop
// kills it.
const stopGrace = 2 * time.Second

// stop stops the servers, giving each up to grace to exit on SIGTERM.
func (e *Environment) stop(grace time.Duration) {
	e.stopOnce.Do(func() {
		if e.shared != nil {
			e.leaveShared() // the servers are not this package's to stop
			return
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		e.kcm.stop(grace)
		e.apiserver.stop(grace)
		e.etcd.stop(grace)
		if e.spawner != nil {
			e.spawner.close()
		}
		if e.ownDir {
			os.RemoveAll(e.Dir)
		}
	})
}

// StopAPIServer stops kube-apiserver (SIGTERM, SIGKILL after two
// seconds), leaving etcd and the controller manager running: clients see
// connection refused until StartAPIServer. For fault-injection tests.
func (e *Environment) StopAPIServer() {
	e.mustBePrivate("StopAPIServer")
	e.mu.Lock()
	defer e.mu.Unlock()
	e.apiserver.stop(stopGrace)
}

// StartAPIServer starts kube-apiserver again on the same port, with the
// same certificates and etcd, and waits until it is ready: Config and
// Kubeconfig stay valid.
func (e *Environment) StartAPIServer(ctx context.Context) error {
	e.mustBePrivate("StartAPIServer")
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.apiserver != nil && e.apiserver.running() {
		return errors.New("testenv: StartAPIServer: kube-apiserver is running; call StopAPIServer first")
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.StartTimeout)
	defer cancel()
	p, err := e.startAPIServer(e.apiPort, "http://127.0.0.1:"+strconv.Itoa(e.etcdPort))
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	e.apiserver = p
	return waitFor(ctx, p, e.apiserverReady)
}

// StopEtcd stops etcd (SIGTERM, SIGKILL after two seconds), leaving the
// apiserver running: it answers with errors until StartEtcd. For
// fault-injection tests.
func (e *Environment) StopEtcd() {
	e.mustBePrivate("StopEtcd")
	e.mu.Lock()
	defer e.mu.Unlock()
	e.etcd.stop(stopGrace)
}

// StartEtcd starts etcd again on the same ports and data directory and
// waits until it is healthy.
func (e *Environment) StartEtcd(ctx context.Context) error {
	e.mustBePrivate("StartEtcd")
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.etcd != nil && e.etcd.running() {
		return errors.New("testenv: StartEtcd: etcd is running; call StopEtcd first")
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.StartTimeout)
	defer cancel()
	p, err := e.startEtcd(e.etcdPort, e.peerPort)
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	e.etcd = p
	url := "http://127.0.0.1:" + strconv.Itoa(e.etcdPort)
	return waitFor(ctx, p, func(ctx context.Context) error { return etcdHealthy(ctx, url) })
}

// mustBePrivate panics when e uses the shared control plane: stopping its
// servers would break every package using it.
func (e *Environment) mustBePrivate(method string) {
	if e.shared != nil {
		panic("testenv: " + method + " on the shared control plane would break the other packages using it; set Options.Private in this package's testenv.Options")
	}
}

// Clientset returns a client for the admin identity.
func (e *Environment) Clientset() kubernetes.Interface { return e.clientset }

// waitFor polls check until it succeeds, the process exits or ctx ends; the
// error carries the process's last log lines.
func waitFor(ctx context.Context, p *process, check func(context.Context) error) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("testenv: %w", p.exitError())
		case <-ctx.Done():
			return fmt.Errorf("testenv: %s was not ready in time (%v; last check: %v); raise Options.StartTimeout on a slow machine\nlast lines of %s:\n%s",
				p.name, ctx.Err(), err, p.logPath, p.tail(50))
		case <-tick.C:
		}
	}
}

func etcdHealthy(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"health":"true"`) {
		return fmt.Errorf("%w: %s", errNotReady, body)
	}
	return nil
}

func (e *Environment) apiserverReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	body, err := e.clientset.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("%w: %v %s", errNotReady, err, body)
	}
	return nil
}

// port returns want after checking it is free, or a free port when want is 0.
func port(want int, option string) (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(want))
	if err != nil {
		return 0, fmt.Errorf("testenv: port %d on 127.0.0.1 is in use (%v): choose another for Options.%s, or 0 to pick a free one", want, err, option)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

const (
	dirPrefix = "opgen-testenv-"
	ownerFile = "owner.pid"
)

// removeStaleDirs deletes temporary directories of environments whose
// process died without Stop (a crash or SIGKILL); their servers died with
// them through the parent-death signal.
func removeStaleDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || processAlive(pid) {
			continue
		}
		os.RemoveAll(dir)
	}
}

// PIDs returns the process ids of the servers that are running, none on
// the shared control plane (whose servers are not e's).
func (e *Environment) PIDs() []int {
	var pids []int
	for _, p := range []*process{e.etcd, e.apiserver, e.kcm} {
		if p != nil && p.running() {
			pids = append(pids, p.cmd.Process.Pid)
		}
	}
	return pids
}

// mergeFlags returns base with extra added; an extra flag replaces every base
// flag of the same name, since repeating a list flag would append to it.
func mergeFlags(base, extra []string) []string {
	name := func(flag string) string { n, _, _ := strings.Cut(flag, "="); return n }
	replaced := map[string]bool{}
	for _, f := range extra {
		replaced[name(f)] = true
	}
	var out []string
	for _, f := range base {
		if !replaced[name(f)] {
			out = append(out, f)
		}
	}
	return append(out, extra...)
}
