//go:build unix

package cachefill

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process used so far, user and
// system, of every thread.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
