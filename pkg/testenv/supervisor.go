package testenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/opgen-sdk/opgen/internal/osenv"
)

// lockShared takes the state directory's lock, waiting for other packages
// (one of them may be starting the control plane: seconds) until ctx ends.
func lockShared(ctx context.Context, dir string, out io.Writer) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w (set %s to a writable directory, or %s=0)", dir, err, EnvSharedDir, EnvShared)
	}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	start, told := time.Now(), time.Now()
	for {
		unlock, err := tryLock(f)
		if err == nil {
			return unlock, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if time.Since(told) >= 5*time.Second {
			fmt.Fprintf(out, "testenv: waiting for another test package to finish starting the shared control plane (it holds %s; waited %s)\n",
				path, time.Since(start).Round(time.Second))
			told = time.Now()
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("gave up waiting for the lock %s: %w", path, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// tryLock takes an exclusive flock on f without waiting; the returned func
// releases it and closes f.
func tryLock(f *os.File) (func(), error) {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// spawnSupervisor starts this executable again as the supervisor of a new
// shared control plane in dir (see supervise), detached in a session of its
// own so that it outlives this test binary, and waits until it has written
// its state.
func (e *Environment) spawnSupervisor(ctx context.Context, dir string) (*sharedState, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, logFile)
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envSupervise+"="+dir, envSuperviseBin+"="+filepath.Dir(e.Binaries.APIServer))
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log // never this binary's output, which `go test` reads to EOF
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the shared control plane's supervisor: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p := &process{name: "the shared control plane's supervisor", logPath: logPath}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if st, _ := readState(dir); st != nil && st.Supervisor.PID == cmd.Process.Pid {
			return st, nil
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("%s exited: %v\nlast lines of %s:\n%s", p.name, cmd.ProcessState, logPath, p.tail(30))
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
			return nil, fmt.Errorf("%s was not ready in time (%v); raise Options.StartTimeout on a slow machine\nlast lines of %s:\n%s",
				p.name, ctx.Err(), logPath, p.tail(30))
		case <-tick.C:
		}
	}
}

// supervise runs the shared control plane of dir until it has had no user
// for the idle period (EnvIdle), or until SIGTERM, and returns the exit
// code. Its servers get its parent-death signal: they cannot outlive it.
func supervise(dir, binDir string) int {
	os.Unsetenv(envSupervise)
	os.Unsetenv(envSuperviseBin)
	idle := DefaultIdle
	if v := os.Getenv(EnvIdle); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "testenv: %s=%q: %v\n", EnvIdle, v, err)
			return 2
		}
		idle = d
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	runDir := filepath.Join(dir, runDirName)
	os.RemoveAll(runDir)
	env := New(Options{BinDir: binDir, Dir: runDir, ControllerManager: true, Controllers: sharedControllers, Output: os.Stderr})
	defer os.RemoveAll(runDir)
	if err := env.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	self := identityOf(os.Getpid())
	st := sharedState{Supervisor: self, Host: env.Config.Host, Kubeconfig: env.Kubeconfig, Dir: runDir, APIServer: env.Binaries.APIServer}
	data, _ := json.Marshal(st)
	if err := osenv.WriteFileAtomic(filepath.Join(dir, stateFile), data, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "testenv: write the state:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "%s: shared control plane ready at %s; it stops %s after its last user leaves\n", time.Now().Format(time.RFC3339), st.Host, idle)
	why, code := env.superviseLoop(ctx, dir, idle)
	fmt.Fprintf(os.Stderr, "%s: stopping: %s\n", time.Now().Format(time.RFC3339), why)
	if cur, _ := readState(dir); cur != nil && cur.Supervisor == self {
		os.Remove(filepath.Join(dir, stateFile))
	}
	return code
}

// superviseLoop returns why the shared control plane must stop, and the
// exit code, holding the state lock when that is for idleness, so that no
// user joins a server about to stop.
func (e *Environment) superviseLoop(ctx context.Context, dir string, idle time.Duration) (string, int) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	lastUsed := time.Now()
	for {
		select {
		case <-ctx.Done():
			return "signalled", 0
		case <-e.apiserver.exited:
			return e.apiserver.exitError().Error(), 1
		case <-e.etcd.exited:
			return e.etcd.exitError().Error(), 1
		case <-tick.C:
		}
		if len(liveUsers(dir)) > 0 {
			lastUsed = time.Now()
			continue
		}
		if time.Since(lastUsed) < idle {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			continue
		}
		unlock, err := tryLock(f)
		if err != nil {
			f.Close()
			continue // a package is joining
		}
		if len(liveUsers(dir)) > 0 {
			unlock()
			lastUsed = time.Now()
			continue
		}
		os.Remove(filepath.Join(dir, stateFile))
		unlock()
		return fmt.Sprintf("no user for %s", idle), 0
	}
}
