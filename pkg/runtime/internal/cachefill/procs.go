package cachefill

import (
	"os"
	"runtime"
	"time"
)

// fillProcs is the number of processors (GOMAXPROCS) the process runs on
// while its caches fill, until it is busy enough to use more.
//
// A cache fill is a stream per kind, each read and decoded by one
// goroutine as the API server sends it, event by event. With more
// processors than the fill keeps busy, every event the connection's
// reader hands to the decoder wakes an idle processor, which spins
// looking for work, polls the network and parks again: at 10,000 objects
// of the benchmark's kind, a quarter of the operator's CPU during its
// start, taken from the API server when they share cores (a bench-compare
// of 5 rounds: the operator's CPU to all handled 0.80x, the start 0.88x,
// lower in every round).
const fillProcs = 1

// busyShare is the share of its processors the process must use over a
// tick of procsTick for the fill to get all of them back: a fill that
// decodes as fast as it can (many kinds, or an API server faster than
// one core decodes) is not held to fillProcs.
const (
	busyShare = 0.9
	procsTick = 200 * time.Millisecond
)

// procPacing holds GOMAXPROCS while the process's first caches fill. Only
// that fill is paced, its start: a later one (a fleet engaging a cluster,
// the next operator of a test binary) shares the process with workers
// that are running, and would hold them to fillProcs too.
var procPacing struct {
	filling
	over   bool          // the first fill ended: no later one is paced
	orig   int           // GOMAXPROCS to restore; 0: left alone
	stop   chan struct{} // ends the busy watch
	done   chan struct{} // closed when the busy watch ended
	raised bool          // the watch gave every processor back; written by the watch, read once it ended
}

// watchProcs runs the busy watch; tests replace it.
var watchProcs = func(stop <-chan struct{}, raise func()) {
	t := time.NewTicker(procsTick)
	defer t.Stop()
	watchBusy(stop, t.C, processCPU, time.Now, fillProcs, raise)
}

// PaceProcs runs the process on fillProcs processors while its first
// caches fill, and gives it every processor back as soon as it uses nearly all
// of those. It leaves GOMAXPROCS alone when the environment sets it, when
// it is fillProcs or fewer already, and where the process's CPU time
// cannot be read. The returned func restores it; it may be called twice.
func PaceProcs() (restore func()) {
	return procPacing.hold(func() {
		if !procPacing.over {
			lowerProcs()
		}
	}, func() {
		procPacing.over = true
		if procPacing.orig > 0 {
			restoreProcs()
		}
	})
}

// lowerProcs sets GOMAXPROCS to fillProcs and starts the busy watch.
// Called with procPacing held.
func lowerProcs() {
	procPacing.orig = 0
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	if _, ok := processCPU(); !ok {
		return
	}
	orig := runtime.GOMAXPROCS(0)
	if orig <= fillProcs {
		return
	}
	runtime.GOMAXPROCS(fillProcs)
	stop, done := make(chan struct{}), make(chan struct{})
	procPacing.orig, procPacing.stop, procPacing.done, procPacing.raised = orig, stop, done, false
	go func() {
		defer close(done)
		watchProcs(stop, func() {
			if runtime.GOMAXPROCS(0) == fillProcs { // else the process set its own
				runtime.GOMAXPROCS(orig)
			}
			procPacing.raised = true
		})
	}()
}

// restoreProcs ends the busy watch and puts GOMAXPROCS back, unless the
// process changed it meanwhile. Go's own default (which follows the
// container's CPU limit) is restored as the default, so that it goes on
// following the limit; a value the process had set in code is set again.
// Called with procPacing held.
func restoreProcs() {
	close(procPacing.stop)
	<-procPacing.done
	orig := procPacing.orig
	procPacing.orig = 0
	expect := fillProcs
	if procPacing.raised {
		expect = orig
	}
	if runtime.GOMAXPROCS(0) != expect {
		return // the process set its own meanwhile
	}
	runtime.SetDefaultGOMAXPROCS()
	if runtime.GOMAXPROCS(0) != orig {
		runtime.GOMAXPROCS(orig) // the process had set it in code
	}
}

// watchBusy reads the process's CPU time at each tick until stop, and
// calls raise once, and returns, when over a tick the process used at
// least busyShare of procs processors.
func watchBusy(stop <-chan struct{}, ticks <-chan time.Time, cpu func() (time.Duration, bool), now func() time.Time, procs int, raise func()) {
	c0, _ := cpu()
	w0 := now()
	for {
		select {
		case <-stop:
			return
		case <-ticks:
		}
		c1, _ := cpu()
		w1 := now()
		if wall := w1.Sub(w0); wall > 0 && float64(c1-c0) >= busyShare*float64(procs)*float64(wall) {
			raise()
			return
		}
		c0, w0 = c1, w1
	}
}

// Pace paces the garbage collector (PaceGC) and the processors
// (PaceProcs) while the caches fill. The returned func restores both; it
// may be called twice.
func Pace() (restore func()) {
	gc, procs := PaceGC(), PaceProcs()
	return func() {
		procs()
		gc()
	}
}
