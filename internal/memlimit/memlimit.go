// Package memlimit paces opgen's garbage collector so that a generation
// run's peak memory stays close to what it keeps alive.
//
// A run loads and type-checks the project once and keeps that model for
// every generator; the generators then allocate much that dies at once.
// With GOGC=100 alone the heap grows to twice the live heap before each
// collection, so the peak is about twice what the run needs. A soft memory
// limit makes the runtime collect earlier while the live heap is well below
// the limit, and costs nothing when a run never comes near it.
//
// The limit follows the live heap: once a collection leaves more than three
// quarters of the limit alive, the limit rises to twice the live heap, so a
// project too large for the default pays no more collections than GOGC=100
// would give it.
package memlimit

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Default is the soft limit opgen sets: the live heap of a forced full run
// over 200 kinds stays below 300 MiB, and with this limit its peak RSS
// stays below what controller-gen and code-generator need for the same
// project.
const Default = 400 << 20

// Set installs a soft memory limit of limit bytes for the process, unless
// GOMEMLIMIT or GOGC is set in the environment: the user's choice wins.
// It returns a function that removes the limit and stops following the
// live heap, and whether it installed one.
func Set(limit int64) (undo func(), installed bool) {
	if os.Getenv("GOMEMLIMIT") != "" || os.Getenv("GOGC") != "" {
		return func() {}, false
	}
	f := &follower{limit: limit}
	prev := debug.SetMemoryLimit(limit)
	f.watch()
	return func() {
		f.mu.Lock()
		f.stopped = true
		f.mu.Unlock()
		debug.SetMemoryLimit(prev)
	}, true
}

// follower raises the limit when the live heap comes near it.
type follower struct {
	mu      sync.Mutex
	limit   int64
	stopped bool
}

// watch arms a finalizer that runs after the next collection: it checks
// the live heap then, and arms itself again.
func (f *follower) watch() {
	sentinel := new([16]byte)
	runtime.SetFinalizer(sentinel, func(*[16]byte) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.stopped {
			return
		}
		if live := liveHeap(); live > f.limit/4*3 && live < math.MaxInt64/2 {
			f.limit = 2 * live
			debug.SetMemoryLimit(f.limit)
		}
		f.watch()
	})
}

// liveHeap returns the heap the last collection left alive.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}
