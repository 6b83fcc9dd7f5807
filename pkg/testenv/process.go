package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// process is one control-plane binary running in its own process group, with
// its output in a log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	waitErr error
}

// spawner starts processes from one goroutine locked to its OS thread.
//
// The children get PR_SET_PDEATHSIG=SIGKILL so that they die with the test
// binary even when it panics or is killed, where no deferred Stop runs. Linux
// delivers that signal when the *thread* that forked the child exits, and the
// Go runtime may retire threads, so every fork happens on a thread that is
// locked for the environment's whole life and released only after the
// children are gone.
type spawner struct {
	requests chan spawnRequest
	done     chan struct{}
}

type spawnRequest struct {
	cmd   *exec.Cmd
	reply chan error
}

func newSpawner() *spawner {
	s := &spawner{requests: make(chan spawnRequest), done: make(chan struct{})}
	started := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		close(started)
		for {
			select {
			case r := <-s.requests:
				r.reply <- r.cmd.Start()
			case <-s.done:
				runtime.UnlockOSThread()
				return
			}
		}
	}()
	<-started
	return s
}

func (s *spawner) start(cmd *exec.Cmd) error {
	reply := make(chan error)
	s.requests <- spawnRequest{cmd: cmd, reply: reply}
	return <-reply
}

// close releases the locked thread; call it only after every child exited.
func (s *spawner) close() { close(s.done) }

func (s *spawner) run(name, binary, dir string, args ...string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.start(cmd); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, binary, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	return p, nil
}

// running reports whether the process has not exited yet.
func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM to the process group, waits up to grace, then SIGKILLs
// the group and waits for the exit.
func (p *process) stop(grace time.Duration) {
	if p == nil || !p.running() {
		return
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.exited
	}
	// Anything the process left in its group goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// exitError describes how the process ended, with its log tail.
func (p *process) exitError() error {
	return fmt.Errorf("%s exited: %v\nlast lines of %s:\n%s", p.name, p.waitErr, p.logPath, p.tail(50))
}

// tail returns the last n lines of the process log.
func (p *process) tail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// bindConflict reports whether the process failed because a port was taken
// between choosing it and binding it.
func (p *process) bindConflict() bool {
	return p != nil && !p.running() && strings.Contains(p.tail(50), "address already in use")
}

var errNotReady = errors.New("not ready")

// processAlive reports whether a process with this pid exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
