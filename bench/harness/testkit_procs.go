package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// supervisorState is the part of a shared control plane's state.json
// (pkg/testenv, sharedState) that names its supervisor: its pid and start
// time, field 22 of /proc/<pid>/stat, so that a reused pid is not taken
// for it.
type supervisorState struct {
	Supervisor struct {
		PID   int    `json:"pid"`
		Start string `json:"start"`
	} `json:"supervisor"`
}

// liveSupervisor returns the supervisor of the shared control plane of
// dir, if one runs, as its pid and start time.
func liveSupervisor(dir string) (pid int, start string, ok bool) {
	data, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		return 0, "", false
	}
	var st supervisorState
	if json.Unmarshal(data, &st) != nil || st.Supervisor.PID <= 0 {
		return 0, "", false
	}
	if start = st.Supervisor.Start; start == "" {
		start, _ = procStat(st.Supervisor.PID)
	}
	return st.Supervisor.PID, start, alive(st.Supervisor.PID, start)
}

// alive reports whether pid is the process that started at start (not a
// later one with its pid) and has not exited.
func alive(pid int, start string) bool {
	now, state := procStat(pid)
	return now != "" && now == start && state != "Z"
}

// procStat returns the start time and state of pid from /proc/<pid>/stat,
// or "" when it is gone.
func procStat(pid int) (start, state string) {
	fields := statFields(pid)
	if len(fields) < 20 {
		return "", ""
	}
	return fields[19], fields[0]
}

// statFields returns the fields of /proc/<pid>/stat after the command
// name (which ends with ')' and may hold spaces): the first is the state,
// field 3 of the line. None when pid is gone.
func statFields(pid int) []string {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	return strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
}

// stopSupervisor stops the shared control plane of dir, as its idle
// timeout would (SIGTERM: it stops its servers and exits), and waits for
// the supervisor to exit. It removes its state file before it stops the
// servers, so the wait is on the process, not on the file.
func stopSupervisor(dir string) error {
	pid, start, ok := liveSupervisor(dir)
	if !ok {
		return nil
	}
	logf("   stopping the shared control plane of %s (supervisor pid %d; waiting up to 30s for it to stop its servers)", filepath.Base(dir), pid)
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if !alive(pid, start) {
			return nil
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	return fmt.Errorf("the supervisor of %s (pid %d) did not stop within 30s of SIGTERM; killed it, see %s", dir, pid, filepath.Join(dir, "supervisor.log"))
}

// sweep waits up to 5 s for the processes under k.root (a command line
// naming a path there, or a working directory there: only the test
// binaries this benchmark ran, their control planes and supervisors) to
// exit, kills those that do not and returns them.
func (k *kitBench) sweep() []string {
	left := procsUnder(k.root)
	if len(left) == 0 {
		return nil
	}
	logf("   waiting up to 5s for %d processes of the test kits to exit", len(left))
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && len(left) > 0; time.Sleep(100 * time.Millisecond) {
		left = procsUnder(k.root)
	}
	var out []string
	for pid, cmd := range left {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		out = append(out, fmt.Sprintf("pid %d (%s)", pid, cmd))
	}
	return out
}

// procsUnder returns the live processes, other than this one, whose
// command line names a path under root or whose working directory is
// under it, with their command lines.
func procsUnder(root string) map[int]string {
	entries, _ := os.ReadDir("/proc")
	found := map[int]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		p := filepath.Join("/proc", e.Name())
		raw, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		cmd := strings.TrimSpace(string(bytes.ReplaceAll(raw, []byte{0}, []byte{' '})))
		cwd, _ := os.Readlink(filepath.Join(p, "cwd"))
		if _, state := procStat(pid); state == "" || state == "Z" {
			continue
		}
		if strings.Contains(cmd, root) || cwd == root || strings.HasPrefix(cwd, root+"/") {
			found[pid] = cmd[:min(len(cmd), 120)]
		}
	}
	return found
}
