package cachefill

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
)

// syncGCPercent is the garbage collector's target (GOGC) while the caches
// fill. The initial lists decode several times the objects' final size in
// short-lived garbage. At the default 100 the heap peaks near twice the
// cached objects, and that peak stays the process's peak RSS. 25 keeps it
// near 1.25 times, for a few more collections during the fill.
//
// The target is restored when the caches have synced, before the
// controllers' first pass over what they hold. That pass allocates a copy
// of each object and lifts the heap again (at 10,000 objects of the
// benchmark's kind, the peak RSS from 79 to 96 MiB), but at 25 its
// collections ran four times as often, beside the API server on the same
// cores, and a change someone made during the pass waited 34 ms instead
// of 20 to 30 (two bench-compares of 5 rounds each).
const syncGCPercent = 25

// gcPacing holds the GC target while any operator's caches fill.
var gcPacing struct {
	filling
	restore int // the GC percent to restore; -1: leave it
}

// PaceGC lowers the garbage collector's target while the caches fill,
// unless the process chose its own: GOGC in the environment, or a memory
// limit (GOMEMLIMIT, debug.SetMemoryLimit), to which the collector paces
// already. The returned func restores the target; it may be called twice.
func PaceGC() (restore func()) {
	return gcPacing.hold(func() {
		gcPacing.restore = lowerGCPercent()
	}, func() {
		if gcPacing.restore >= 0 {
			debug.SetGCPercent(gcPacing.restore)
		}
	})
}

// filling counts the operators of the process whose caches fill. What it
// paces is process-wide: the first to fill sets it, the last to sync puts
// it back.
type filling struct {
	mu sync.Mutex
	n  int
}

// hold counts one more fill, and calls first when it is the only one. The
// returned func counts it done, and calls last when none is left; it may
// be called twice. first and last run under the count's lock.
func (f *filling) hold(first, last func()) (release func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if f.n == 1 {
		first()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.n--
			if f.n == 0 {
				last()
			}
		})
	}
}

// lowerGCPercent sets syncGCPercent and returns the target to restore, or
// -1 when it left the collector alone.
func lowerGCPercent() int {
	if os.Getenv("GOGC") != "" || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return -1
	}
	old := debug.SetGCPercent(syncGCPercent)
	if old < 0 { // the collector is off: leave it so
		debug.SetGCPercent(old)
		return -1
	}
	return old
}
