package gen

import (
	"fmt"
	"io"
	"runtime/metrics"
	"sync"
	"time"
)

// Timing is how long one stage or generator of a run took, and what it
// allocated.
type Timing struct {
	Name     string
	Duration time.Duration
	// Alloc is the heap bytes allocated, measured only when
	// Options.Timings is set: generators then run one after another, so
	// that each one's allocation is its own.
	Alloc uint64
}

// clock records timings; it is safe for concurrent use.
type clock struct {
	// allocs says whether to measure allocations.
	allocs  bool
	mu      sync.Mutex
	timings []Timing
}

// measure runs fn and records its duration, and its allocation when the
// clock measures them, as name.
func (c *clock) measure(name string, fn func()) {
	start, alloc := time.Now(), c.allocated()
	fn()
	t := Timing{Name: name, Duration: time.Since(start)}
	if c.allocs {
		t.Alloc = c.allocated() - alloc
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timings = append(c.timings, t)
}

var allocSample = []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}

// allocated returns the bytes the process has allocated on the heap so
// far, when the clock measures allocations.
func (c *clock) allocated() uint64 {
	if !c.allocs {
		return 0
	}
	s := []metrics.Sample{allocSample[0]}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// PrintTimings writes r's timings as a table, with the total time, the
// total allocation and the process's peak RSS.
func (r *Result) PrintTimings(w io.Writer, took time.Duration) {
	if r.UpToDate {
		fmt.Fprintf(w, "opgen: up to date (%v): nothing to time; run with --force\n", took.Round(time.Millisecond))
		return
	}
	fmt.Fprintf(w, "opgen: timings (generators one after another, each with its own allocation)\n")
	fmt.Fprintf(w, "  %-28s %10s %12s\n", "stage or generator", "time", "allocated")
	var total uint64
	for _, t := range r.Timings {
		total += t.Alloc
		fmt.Fprintf(w, "  %-28s %10v %12s\n", t.Name, t.Duration.Round(100*time.Microsecond), megabytes(t.Alloc))
	}
	fmt.Fprintf(w, "  %-28s %10v %12s\n", "total", took.Round(time.Millisecond), megabytes(total))
	if rss := peakRSS(); rss > 0 {
		fmt.Fprintf(w, "  peak RSS %s\n", megabytes(rss))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

func megabytes(b uint64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }
