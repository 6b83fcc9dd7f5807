package cachefill

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// skipUnpaced skips a test where PaceProcs leaves GOMAXPROCS alone.
func skipUnpaced(t *testing.T) {
	t.Helper()
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("the environment sets GOMAXPROCS: PaceProcs leaves it alone; unset it to run this test")
	}
	if _, ok := processCPU(); !ok {
		t.Skip("the process's CPU time cannot be read here: PaceProcs leaves GOMAXPROCS alone; run on a unix")
	}
}

// firstFill makes the next fill the process's first, with a busy watch
// that never raises.
func firstFill(t *testing.T) {
	saved := watchProcs
	watchProcs = func(stop <-chan struct{}, _ func()) { <-stop }
	procPacing.over = false
	t.Cleanup(func() { watchProcs = saved })
}

// TestPaceProcs checks that GOMAXPROCS is fillProcs while any operator's
// caches fill at the process's start, is put back when the last of them
// synced, and is left alone by a later fill.
func TestPaceProcs(t *testing.T) {
	skipUnpaced(t)
	orig := runtime.GOMAXPROCS(0)
	if orig <= fillProcs {
		t.Skipf("the process has %d processors: PaceProcs has nothing to lower; run on more", orig)
	}
	firstFill(t)
	a := PaceProcs()
	b := PaceProcs()
	assert.Equal(t, fillProcs, runtime.GOMAXPROCS(0), "while two fill")
	a()
	a() // twice: counted once
	assert.Equal(t, fillProcs, runtime.GOMAXPROCS(0), "while one still fills")
	b()
	assert.Equal(t, orig, runtime.GOMAXPROCS(0), "once none fills")

	c := PaceProcs()
	assert.Equal(t, orig, runtime.GOMAXPROCS(0), "a later fill is not paced")
	c()
	assert.Equal(t, orig, runtime.GOMAXPROCS(0))
}

// TestPaceProcsKeepsTheProcessesOwn checks that a GOMAXPROCS the process
// set in code survives the fill, and that one it sets during the fill is
// not overwritten.
func TestPaceProcsKeepsTheProcessesOwn(t *testing.T) {
	skipUnpaced(t)
	orig := runtime.GOMAXPROCS(0)
	t.Cleanup(func() {
		runtime.SetDefaultGOMAXPROCS()
		runtime.GOMAXPROCS(orig)
	})
	firstFill(t)

	own := orig + 3 // set in code: Go's default is the CPUs, so this is not it
	runtime.GOMAXPROCS(own)
	restore := PaceProcs()
	assert.Equal(t, fillProcs, runtime.GOMAXPROCS(0))
	restore()
	assert.Equal(t, own, runtime.GOMAXPROCS(0), "the process's own value, set again")

	firstFill(t)
	restore = PaceProcs()
	runtime.GOMAXPROCS(own + 1) // the process changes it while the caches fill
	restore()
	assert.Equal(t, own+1, runtime.GOMAXPROCS(0), "left as the process set it")
}

// TestWatchBusy checks that the busy watch gives the processors back
// after the first tick whose CPU time reaches busyShare of them, and not
// before.
func TestWatchBusy(t *testing.T) {
	for _, tc := range []struct {
		name  string
		procs int
		use   []float64 // the processors' share used in each tick
		raise int       // the tick after which it raises; 0: never
	}{
		{name: "idle", procs: 1, use: []float64{0.1, 0.5, 0.89, 0.3}},
		{name: "busy at once", procs: 1, use: []float64{0.95}, raise: 1},
		{name: "busy later", procs: 1, use: []float64{0.2, 0.6, 0.9, 0.1}, raise: 3},
		{name: "one busy tick among idle ones", procs: 1, use: []float64{0.1, 1.2, 0.1}, raise: 2},
		{name: "a core's worth of two", procs: 2, use: []float64{0.5, 0.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const tick = time.Second
			// cpu and now are called once before the first tick and once
			// after each, by the watch's goroutine alone.
			var cpu time.Duration
			wall, calls := time.Unix(0, 0), 0
			readCPU := func() (time.Duration, bool) {
				if calls > 0 {
					cpu += time.Duration(tc.use[calls-1] * float64(tc.procs) * float64(tick))
				}
				calls++
				return cpu, true
			}
			now := func() time.Time {
				if calls > 1 {
					wall = time.Unix(0, 0).Add(time.Duration(calls-1) * tick)
				}
				return wall
			}
			ticks, stop, done := make(chan time.Time), make(chan struct{}), make(chan struct{})
			raisedAt := 0
			go func() {
				defer close(done)
				watchBusy(stop, ticks, readCPU, now, tc.procs, func() { raisedAt = calls - 1 })
			}()
		send:
			for range tc.use {
				select {
				case ticks <- time.Time{}:
				case <-done:
					break send // it raised, and returned
				}
			}
			close(stop)
			<-done
			assert.Equal(t, tc.raise, raisedAt)
		})
	}
}
