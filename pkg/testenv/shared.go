package testenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/opgen-sdk/opgen/internal/controlplane"
	"github.com/opgen-sdk/opgen/internal/osenv"
)

// Environment variables of the shared control plane.
const (
	// EnvShared set to 0 or false makes Main and StartShared start a
	// private control plane in every package.
	EnvShared = "OPGEN_TESTENV_SHARED"
	// EnvSharedDir overrides the directory that holds the shared control
	// plane's state (default: in the opgen cache, one per control-plane
	// build). Packages run with different directories share nothing.
	EnvSharedDir = "OPGEN_TESTENV_SHARED_DIR"
	// EnvIdle is how long the shared control plane outlives its last user,
	// as a Go duration such as 30s. Default: DefaultIdle.
	EnvIdle = "OPGEN_TESTENV_IDLE"

	// envSupervise makes a test binary the supervisor of a shared control
	// plane (see init); its value is the state directory.
	envSupervise = "OPGEN_TESTENV_SUPERVISE"
	// envSuperviseBin names the directory of the binaries it runs.
	envSuperviseBin = "OPGEN_TESTENV_SUPERVISE_BIN"
)

// DefaultIdle is how long the shared control plane stays up with no test
// package using it: long enough to serve the next `go test` of an edit loop.
const DefaultIdle = 5 * time.Minute

// sharedControllers run in the shared control plane's controller manager:
// the namespace controller empties and removes the namespaces that tests
// delete, which would otherwise stay Terminating, with their objects, run
// after run.
var sharedControllers = []string{"namespace-controller"}

func init() {
	// A test binary started by spawnSupervisor supervises the shared control
	// plane instead of running tests. Package init runs before TestMain, so
	// none of the binary's tests run in the supervisor.
	if dir := os.Getenv(envSupervise); dir != "" {
		os.Exit(supervise(dir, os.Getenv(envSuperviseBin)))
	}
}

// identity names a process across pid reuse: its pid and, where /proc
// exists, its start time.
type identity struct {
	PID   int    `json:"pid"`
	Start string `json:"start,omitempty"`
}

func identityOf(pid int) identity { return identity{PID: pid, Start: startTime(pid)} }

func (id identity) alive() bool {
	return processAlive(id.PID) && (id.Start == "" || startTime(id.PID) == id.Start)
}

// startTime returns field 22 of /proc/<pid>/stat, or "" without /proc.
func startTime(pid int) string {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return ""
	}
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}

// sharedState is what the supervisor writes once the shared control plane
// is ready, and what users read to connect to it.
type sharedState struct {
	Supervisor identity `json:"supervisor"`
	Host       string   `json:"host"`
	Kubeconfig string   `json:"kubeconfig"`
	Dir        string   `json:"dir"`
	APIServer  string   `json:"apiServer"`
}

// sharedUser is the record of one Environment using the shared control
// plane, in users/ of the state directory, removed by Stop. A record whose
// process is gone counts for nothing and is removed by the next reader.
type sharedUser struct {
	identity
	Exclusive []string `json:"exclusive,omitempty"`
}

// sharedUse is an Environment's hold on the shared control plane.
type sharedUse struct {
	record string
}

var userSeq atomic.Int64

// Shared reports whether e uses the shared control plane.
func (e *Environment) Shared() bool { return e.shared != nil }

// StartShared starts e like Start, except that when it can, it uses the
// control plane shared by the test packages of this machine rather than
// starting one: it starts the shared one when none runs, and otherwise
// connects to it in well under a second. Main uses it.
//
// e gets a private control plane, as from Start, when Options.Private is
// set, EnvShared is 0, the options ask for something a shared control plane
// cannot give (Dir, fixed ports, APIServerFlags, Audit,
// ControllerManager), another live package holds one of its Exclusive
// names or CRDs, or the shared one is unhealthy; the last two say why on
// Options.Output.
func (e *Environment) StartShared(ctx context.Context) error {
	if e.Config != nil {
		return errors.New("testenv: environment already started")
	}
	if e.unshareable() {
		return e.Start(ctx)
	}
	err := e.joinShared(ctx)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return err
	}
	fmt.Fprintf(e.opts.Output, "testenv: %v; starting a private control plane\n", err)
	e.leaveShared()
	e.Config, e.Kubeconfig, e.Dir, e.creds, e.clientset = nil, "", "", nil, nil
	return e.Start(ctx)
}

func (e *Environment) unshareable() bool {
	if off, err := strconv.ParseBool(os.Getenv(EnvShared)); err == nil && !off {
		return true
	}
	o := e.opts
	return o.Private || o.Audit || o.ControllerManager || o.Dir != "" || o.APIServerPort != 0 || o.EtcdPort != 0 || len(o.APIServerFlags) > 0
}

// joinShared connects e to the shared control plane, starting it when
// none runs, records e as a user and installs e's CRDs.
func (e *Environment) joinShared(ctx context.Context) error {
	if err := e.resolveBinaries(ctx); err != nil {
		return err
	}
	dir, err := sharedDir(e.Binaries)
	if err != nil {
		return err
	}
	exclusive, err := e.exclusive()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.StartTimeout)
	defer cancel()
	if err := e.attach(ctx, dir, exclusive); err != nil {
		return err
	}
	for _, d := range e.opts.CRDDirs {
		if err := e.InstallCRDs(ctx, d); err != nil {
			return err
		}
	}
	return nil
}

// attach does, under the state directory's lock, what must not interleave
// with other packages: check the exclusive names, find or start the
// control plane, record e as its user.
func (e *Environment) attach(ctx context.Context, dir string, exclusive []string) error {
	unlock, err := lockShared(ctx, dir, e.opts.Output)
	if err != nil {
		return err
	}
	defer unlock()
	users := liveUsers(dir)
	if err := checkExclusive(users, exclusive); err != nil {
		return err
	}
	st, err := e.liveState(ctx, dir, len(users))
	if err != nil {
		return err
	}
	if st == nil {
		if st, err = e.spawnSupervisor(ctx, dir); err != nil {
			return err
		}
		if err := e.connect(st); err != nil {
			return err
		}
	}
	return e.register(dir, exclusive)
}

// exclusive returns Options.Exclusive and the names of the CRDs in
// Options.CRDDirs.
func (e *Environment) exclusive() ([]string, error) {
	names := slices.Clone(e.opts.Exclusive)
	for _, dir := range e.opts.CRDDirs {
		crds, err := ReadCRDs(dir)
		if err != nil {
			return nil, err
		}
		for _, crd := range crds {
			names = append(names, crd.Name)
		}
	}
	return names, nil
}

func checkExclusive(users []sharedUser, want []string) error {
	for _, u := range users {
		for _, name := range u.Exclusive {
			if slices.Contains(want, name) {
				return fmt.Errorf("%s is in use on the shared control plane by another test package (pid %d)", name, u.PID)
			}
		}
	}
	return nil
}

// sharedDir is EnvSharedDir or a directory in the opgen cache named after
// the binaries, so that two control-plane builds never share a server.
func sharedDir(b controlplane.Binaries) (string, error) {
	if dir := os.Getenv(EnvSharedDir); dir != "" {
		return dir, nil
	}
	sum := sha256.Sum256([]byte(b.APIServer))
	return osenv.CacheDir("testenv", "shared-"+hex.EncodeToString(sum[:4]))
}

// liveState returns the shared control plane of dir after connecting e to
// it, or nil when none runs. One that does not answer /readyz is stopped
// and forgotten when nobody uses it (users is the count of live users),
// and is an error otherwise: its users may only be slow.
func (e *Environment) liveState(ctx context.Context, dir string, users int) (*sharedState, error) {
	st, err := readState(dir)
	if err != nil || st == nil {
		return nil, err
	}
	why := e.checkState(ctx, st)
	if why == nil {
		return st, nil
	}
	if users > 0 {
		return nil, fmt.Errorf("the shared control plane in %s is unhealthy (%v) and in use by %d other package(s)", dir, why, users)
	}
	fmt.Fprintf(e.opts.Output, "testenv: the shared control plane in %s is unhealthy (%v); starting a new one\n", dir, why)
	if st.Supervisor.alive() {
		_ = syscall.Kill(st.Supervisor.PID, syscall.SIGTERM)
	}
	os.Remove(filepath.Join(dir, stateFile))
	e.Config, e.clientset = nil, nil
	return nil, nil
}

// checkState connects e to st and checks that it is ready, allowing a busy
// machine a few seconds.
func (e *Environment) checkState(ctx context.Context, st *sharedState) error {
	switch {
	case !st.Supervisor.alive():
		return fmt.Errorf("its supervisor, pid %d, is gone", st.Supervisor.PID)
	case st.APIServer != e.Binaries.APIServer:
		return fmt.Errorf("it runs %s, not %s", st.APIServer, e.Binaries.APIServer)
	}
	if err := e.connect(st); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var err error
	for {
		if err = e.apiserverReady(ctx); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// connect points e at st with the admin identity from its kubeconfig.
func (e *Environment) connect(st *sharedState) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", st.Kubeconfig)
	if err != nil {
		return fmt.Errorf("read the shared control plane's kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000 // as adminConfig
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	e.Config, e.Kubeconfig, e.Dir, e.clientset = cfg, st.Kubeconfig, st.Dir, cs
	e.creds = &credentials{caPEM: cfg.CAData}
	return nil
}

// register records e as a user of the shared control plane of dir.
func (e *Environment) register(dir string, exclusive []string) error {
	u := sharedUser{identity: identityOf(os.Getpid()), Exclusive: exclusive}
	data, err := json.Marshal(u)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, usersDir, fmt.Sprintf("%d-%d.json", u.PID, userSeq.Add(1)))
	if err := osenv.WriteFileAtomic(path, data, 0o600); err != nil {
		return fmt.Errorf("record this package as a user of the shared control plane: %w", err)
	}
	e.shared = &sharedUse{record: path}
	return nil
}

// leaveShared removes e's user record; the control plane runs on.
func (e *Environment) leaveShared() {
	if e.shared != nil {
		os.Remove(e.shared.record)
		e.shared = nil
	}
}

const (
	stateFile  = "state.json"
	usersDir   = "users"
	lockFile   = "lock"
	logFile    = "supervisor.log"
	runDirName = "run"
)

func readState(dir string) (*sharedState, error) {
	data, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st := &sharedState{}
	if err := json.Unmarshal(data, st); err != nil {
		// A state file is written atomically; a bad one is from something
		// else, and the next supervisor overwrites it.
		return nil, nil
	}
	return st, nil
}

// liveUsers returns the user records of dir whose process lives, and
// removes the others.
func liveUsers(dir string) []sharedUser {
	paths, _ := filepath.Glob(filepath.Join(dir, usersDir, "*.json"))
	var users []sharedUser
	for _, path := range paths {
		var u sharedUser
		data, err := os.ReadFile(path)
		if err != nil {
			continue // removed meanwhile
		}
		if json.Unmarshal(data, &u) != nil || !u.alive() {
			os.Remove(path)
			continue
		}
		users = append(users, u)
	}
	return users
}
