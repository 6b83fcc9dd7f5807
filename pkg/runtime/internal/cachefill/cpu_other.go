//go:build !unix

package cachefill

import "time"

// processCPU cannot read the process's CPU time here: PaceProcs leaves
// GOMAXPROCS alone.
func processCPU() (time.Duration, bool) { return 0, false }
