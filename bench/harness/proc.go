package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/opgen-sdk/opgen/bench/internal/probe"
)

// The variants of the operators under test.
const (
	opgen   = "opgen"
	cr      = "cr"
	crTuned = "cr-tuned"
	// crAlways is controller-runtime patching the status on every
	// reconcile, as the kubebuilder tutorial's reconciler does (only in the
	// steady-state writes benchmark).
	crAlways = "cr-always"
	// sideA and sideB are the opgen operator built at two commits, in a
	// comparison (-compare).
	sideA = "A"
	sideB = "B"
)

// framework is the operator binary a variant runs: opgen, cr, or in a
// comparison one of the two sides.
func framework(variant string) string {
	switch variant {
	case opgen, sideA, sideB:
		return variant
	}
	return cr
}

// rec is a trace line: a reconcile of name at generation gen started at t.
type rec struct {
	name string
	gen  int64
	t    time.Time
}

// proc is one operator process under test.
type proc struct {
	variant  string
	identity string // of leader election, "" for the default
	cmd      *exec.Cmd
	start    time.Time
	addr     string
	logPath  string

	addrc chan string
	allc  chan time.Time
	leadc chan time.Time
	done  chan struct{}

	mu   sync.Mutex
	recs []rec
	lead time.Time
	// marks are the moments of the operator's start its probe marked
	// (opgen only: watch, listed, synced, leading).
	marks map[string]time.Time

	// exitAt and waitErr are set before done is closed.
	exitAt  time.Time
	waitErr error
}

// opts are the flags of one operator run (see package probe).
type opts struct {
	namespace  string
	mode       string
	workers    int
	requeue    time.Duration
	expect     int
	trace      bool
	leader     bool
	leaseName  string
	identity   string
	lease      leaseTimings
	extraFlags []string
}

type leaseTimings struct{ duration, renew, retry time.Duration }

// startOperator starts variant with o and waits for its probe endpoint.
func (s *suite) startOperator(variant string, o opts) (*proc, error) {
	args := []string{
		"-kubeconfig", s.env.Kubeconfig,
		"-namespace", o.namespace,
		"-mode", o.mode,
		"-workers", strconv.Itoa(o.workers),
		"-qps", strconv.Itoa(s.cfg.qps), "-burst", strconv.Itoa(s.cfg.burst),
		"-requeue", o.requeue.String(),
		"-expect", strconv.Itoa(o.expect),
		"-trace=" + strconv.FormatBool(o.trace),
		"-leader-elect=" + strconv.FormatBool(o.leader),
	}
	if o.leader {
		args = append(args, "-lease-namespace", leaseNamespace, "-lease-name", o.leaseName,
			"-lease-duration", o.lease.duration.String(), "-renew-deadline", o.lease.renew.String(), "-retry-period", o.lease.retry.String())
		if o.identity != "" {
			args = append(args, "-identity", o.identity)
		}
	}
	switch variant {
	case crTuned:
		args = append(args, "-variant", "tuned")
	case crAlways:
		args = append(args, "-status-write", "always")
	}
	args = append(args, o.extraFlags...)
	s.procSeq++
	p := &proc{
		variant:  variant,
		identity: o.identity,
		logPath:  filepath.Join(s.logDir, fmt.Sprintf("%03d-%s-%s.log", s.procSeq, variant, o.mode)),
		addrc:    make(chan string, 1),
		allc:     make(chan time.Time, 1),
		leadc:    make(chan time.Time, 1),
		done:     make(chan struct{}),
	}
	logf, err := os.Create(p.logPath)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(s.bins[framework(variant)], args...)
	p.cmd.Env = append(os.Environ(), "KUBE_FEATURE_WatchListClient="+strconv.FormatBool(s.cfg.watchList))
	p.cmd.Stderr = logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.start = time.Now()
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	s.live[p] = true
	go func() {
		p.read(stdout)
		p.waitErr = p.cmd.Wait()
		p.exitAt = time.Now()
		logf.Close()
		close(p.done)
	}()
	select {
	case p.addr = <-p.addrc:
		return p, nil
	case <-p.done:
		return nil, &exitError{p: p, while: "waiting for it to start (its probe address)"}
	case <-time.After(30 * time.Second):
		p.kill()
		return nil, fmt.Errorf("%s printed no probe address in 30s: %s", variant, p.tail())
	}
}

// read parses the probe's stdout protocol.
func (p *proc) read(r interface{ Read([]byte) (int, error) }) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "probe":
			p.addrc <- f[1]
		case "all":
			p.allc <- unixNano(f[1])
		case "lead":
			t := unixNano(f[1])
			p.mu.Lock()
			p.lead = t
			p.mu.Unlock()
			p.leadc <- t
		case "mark":
			if len(f) == 3 {
				p.mu.Lock()
				if p.marks == nil {
					p.marks = map[string]time.Time{}
				}
				p.marks[f[1]] = unixNano(f[2])
				p.mu.Unlock()
			}
		case "rec":
			if len(f) == 4 {
				gen, _ := strconv.ParseInt(f[2], 10, 64)
				p.mu.Lock()
				p.recs = append(p.recs, rec{name: f[1], gen: gen, t: unixNano(f[3])})
				p.mu.Unlock()
			}
		}
	}
}

func unixNano(s string) time.Time {
	n, _ := strconv.ParseInt(s, 10, 64)
	return time.Unix(0, n)
}

// waitAll waits for every expected object to have been reconciled once and
// returns when that happened.
func (p *proc) waitAll(timeout time.Duration) (time.Time, error) {
	select {
	case t := <-p.allc:
		return t, nil
	case <-p.done:
		return time.Time{}, &exitError{p: p, while: "waiting for every object to be reconciled once"}
	case <-time.After(timeout):
		return time.Time{}, fmt.Errorf("%s did not reconcile every object within %v (see %s)", p.variant, timeout, p.logPath)
	}
}

func (p *proc) waitLead(timeout time.Duration) error {
	select {
	case <-p.leadc:
		return nil
	case <-p.done:
		return &exitError{p: p, while: "waiting for it to lead"}
	case <-time.After(timeout):
		return fmt.Errorf("%s did not lead within %v (see %s)", p.variant, timeout, p.logPath)
	}
}

func (p *proc) traces() []rec {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]rec(nil), p.recs...)
}

// stats reads the probe; gc forces a collection first.
func (p *proc) stats(gc bool) (probe.Stats, error) {
	var st probe.Stats
	url := "http://" + p.addr + "/stats"
	if gc {
		url += "?gc=1"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, fmt.Errorf("%s stats: %w", p.variant, err)
	}
	defer resp.Body.Close()
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// cpu returns the process's user plus system CPU time so far.
func (p *proc) cpu() time.Duration { return pidCPU(p.cmd.Process.Pid) }

// pidCPU is the user and system CPU time process pid has used, 0 when it
// cannot be read.
func pidCPU(pid int) time.Duration {
	// utime and stime are fields 14 and 15 of the line
	f := statFields(pid)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is USER_HZ, 100 on Linux.
const clockTicks = 100

// memory returns the process's VmHWM (peak RSS) and, of its RSS now, the
// file-backed pages (RssFile: its binary's and libraries' pages in memory,
// the floor of every process of the same binary), in bytes.
func (p *proc) memory() (peak, file float64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	return parseMemory(string(data))
}

// parseMemory reads VmHWM and RssFile, in bytes, from the text of
// /proc/PID/status.
func parseMemory(status string) (peak, file float64) {
	for _, l := range strings.Split(status, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmHWM:":
			peak = kb * 1024
		case "RssFile:":
			file = kb * 1024
		}
	}
	return peak, file
}

// signal sends sig to the process.
func (p *proc) signal(sig syscall.Signal) { _ = p.cmd.Process.Signal(sig) }

// stop asks the process to shut down and waits, killing it after 15s.
func (p *proc) stop() {
	p.signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.kill()
	}
}

func (p *proc) kill() {
	p.signal(syscall.SIGKILL)
	<-p.done
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// tail returns the last lines of the process's log.
func (p *proc) tail() string { return "\n" + strings.Join(p.tailLines(15), "\n") }

// tailLines returns the last n lines of the process's log.
func (p *proc) tailLines(n int) []string {
	data, _ := os.ReadFile(p.logPath)
	return strings.Split(lastLines(strings.TrimSpace(string(data)), n), "\n")
}

// exitError is an operator that exited on its own while the harness
// waited on it. The sharding benchmark records it and goes on; the others
// stop on it as on any error.
type exitError struct {
	p     *proc
	while string
}

func (e *exitError) Error() string {
	name := e.p.variant
	if e.p.identity != "" {
		name += " " + e.p.identity
	}
	return fmt.Sprintf("%s exited (%v) while %s: %s", name, e.p.waitErr, e.while, e.p.tail())
}

// exitedOf returns an exitError for the first of ps that exited, or nil.
func exitedOf(ps []*proc, while string) error {
	for _, p := range ps {
		if p.exited() {
			return &exitError{p: p, while: while}
		}
	}
	return nil
}
