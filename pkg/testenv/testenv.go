package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
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

	// Audit turns on the kube-apiserver's audit log: every request of a
	// service account, at the Metadata level (who, verb, resource, name,
	// response code), as JSON lines in AuditLog. It needs a control plane
	// of the package's own, as Private gives.
	Audit bool

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
	"storage-version-migrator-controller",
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

// mustBePrivate panics when e uses the shared control plane: stopping its
// servers would break every package using it.
func (e *Environment) mustBePrivate(method string) {
	if e.shared != nil {
		panic("testenv: " + method + " on the shared control plane would break the other packages using it; set Options.Private in this package's testenv.Options")
	}
}

// Clientset returns a client for the admin identity.
func (e *Environment) Clientset() kubernetes.Interface { return e.clientset }

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
