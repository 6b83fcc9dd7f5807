package cachefill

import (
	"context"
	"math"
	"os"
	"runtime/debug"
	"sync"
	"time"
)

// syncGCPercent is the garbage collector's target (GOGC) while the caches
// fill and the controllers make their first pass over what they hold
// (PaceUntilIdle). The initial lists decode several times the objects'
// final size in short-lived garbage, and the first pass allocates a copy
// of each. At the default 100 the heap peaks near twice the cached
// objects, and that peak stays the process's peak RSS. 25 keeps it near
// 1.25 times, for a few more collections during the start.
const syncGCPercent = 25

// gcPacing counts the operators of the process whose caches fill. The GC
// target is process-wide: the first lowers it and the last restores it.
var gcPacing struct {
	sync.Mutex
	n       int
	restore int // the GC percent to restore; -1: leave it
}

// PaceGC lowers the garbage collector's target while the caches fill,
// unless the process chose its own: GOGC in the environment, or a memory
// limit (GOMEMLIMIT, debug.SetMemoryLimit), to which the collector paces
// already. The returned func restores the target; it may be called twice.
func PaceGC() (restore func()) {
	gcPacing.Lock()
	defer gcPacing.Unlock()
	gcPacing.n++
	if gcPacing.n == 1 {
		gcPacing.restore = lowerGCPercent()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			gcPacing.Lock()
			defer gcPacing.Unlock()
			gcPacing.n--
			if gcPacing.n == 0 && gcPacing.restore >= 0 {
				debug.SetGCPercent(gcPacing.restore)
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

// PaceUntilIdle keeps the lower target of PaceGC after the caches synced,
// until the controllers have worked off what they held then (idle reports
// every queue empty; it is polled every 50ms), and calls restore: the
// first pass over every object allocates its copies and its writes, and
// at the default target that garbage lifts the heap to twice the cached
// objects once more. It gives up after idleWithin (a replica that stands
// by does not work its queues off) or when ctx ends.
func PaceUntilIdle(ctx context.Context, restore func(), idle func() bool) {
	defer restore()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	limit := time.NewTimer(idleWithin)
	defer limit.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-limit.C:
			return
		case <-tick.C:
		}
		if idle() {
			return
		}
	}
}

// idleWithin bounds PaceUntilIdle.
const idleWithin = time.Minute
