package main

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// waitIdle waits, before a timed start, until the machine's CPUs were
// mostly idle (busy under idleBusy of them) over one idleWindow: the API
// server's work for the previous run (closing its watches, collecting the
// garbage of serving 20,000 objects) otherwise lands in the next run's
// list, whichever framework that is. It gives up after idleCap and says
// so; without /proc it returns at once.
func waitIdle() {
	start, told := time.Now(), false
	for time.Since(start) < idleCap {
		if !told && time.Since(start) > idleTell {
			logf("   waiting for the machine's CPUs to go idle before a timed start (at most %v)", idleCap)
			told = true
		}
		b0, t0, ok := cpuTimes()
		if !ok {
			return
		}
		time.Sleep(idleWindow)
		b1, t1, ok := cpuTimes()
		if !ok || t1 == t0 {
			return
		}
		if float64(b1-b0)/float64(t1-t0) < idleBusy {
			return
		}
	}
	logf("   note: the machine stayed busy for %v before a timed start; starting anyway", idleCap)
}

const (
	idleWindow = 250 * time.Millisecond
	idleBusy   = 0.2 // fraction of all CPUs
	// idleTell is how long the wait goes on before it says what it waits for.
	idleTell = 3 * time.Second
)

// idleCap is sized for the default 10,000 objects; main stretches it to a
// larger run (config.scaled): after a start over 100,000 objects the API
// server collects its garbage for longer than 15 s.
var idleCap = 15 * time.Second

// cpuTimes returns the busy and total jiffies of all CPUs from /proc/stat.
func cpuTimes() (busy, total uint64, ok bool) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, 0, false
	}
	for i, f := range fields[1:] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total, true
}
