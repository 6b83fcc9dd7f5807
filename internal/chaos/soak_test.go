package chaos

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sample is one reading of the operator process's /metrics.
type sample struct {
	at         time.Duration // since the churn started
	rss        float64       // process_resident_memory_bytes
	goroutines float64       // go_goroutines
}

// scrape reads the two gauges from a /metrics URL.
func scrape(url string) (sample, error) {
	resp, err := http.Get(url)
	if err != nil {
		return sample{}, err
	}
	defer resp.Body.Close()
	var s sample
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		switch {
		case err != nil:
		case name == "process_resident_memory_bytes":
			s.rss = v
		case name == "go_goroutines":
			s.goroutines = v
		}
	}
	if s.rss == 0 || s.goroutines == 0 {
		return s, fmt.Errorf("%s lacks process_resident_memory_bytes or go_goroutines", url)
	}
	return s, sc.Err()
}

// slope is the least-squares slope of y over x.
func slope(x, y []float64) float64 {
	n := float64(len(x))
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx, sy, sxx, sxy = sx+x[i], sy+y[i], sxx+x[i]*x[i], sxy+x[i]*y[i]
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

var metricsURL = regexp.MustCompile(`metrics=(http://\S+/metrics)`)

// TestChurnSoak: the todo-operator under create/delete churn for 20
// minutes (make chaos; one minute in make test), its resident memory and
// goroutines sampled every 5 seconds. Every deleted Todo must be archived.
//
// Leaks are judged two ways. In every form, once the churn is over and
// every Todo is gone, the goroutine count must come back to within
// leakMargin of its count before the churn: a goroutine leaked per Todo
// would leave hundreds more. In the full form, after the first fifth
// (caches and pools filling), neither gauge may trend upward: the
// least-squares slope of goroutines must stay under 1 a minute and that of
// RSS under 1 MiB a minute. One minute is too short for slopes: a single
// idle HTTP connection opened late shows as +1.7 goroutines a minute, and
// the heap still grows to its collection target.
func TestChurnSoak(t *testing.T) {
	c := churn{rate: 5, lifetime: 2 * time.Second, duration: time.Minute, qps: 50}
	if full() {
		c.duration = 20 * time.Minute
	}
	if d, err := time.ParseDuration(os.Getenv("OPGEN_CHAOS_SOAK")); err == nil {
		c.duration = d // a soak of another length, to reproduce a failure
	}
	ns := env.Namespace(t)
	bin := buildTodoOperator(t)
	logPath := filepath.Join(t.TempDir(), "operator.log")
	startOperator(t, bin, ns, logPath, "--metrics-bind-address", "127.0.0.1:0", "--metrics-secure=false")
	defer logTail(t, logPath, 200)
	var url string
	eventuallyWithin(t, "the operator's serving log line with its /metrics URL", time.Minute, func() bool {
		b, _ := os.ReadFile(logPath)
		m := metricsURL.FindSubmatch(b)
		if m != nil {
			url = string(m[1])
		}
		return m != nil
	})
	before, err := scrape(url)
	require.NoError(t, err)
	var (
		mu      sync.Mutex
		samples []sample
		errs    []error
	)
	stop, stopped := make(chan struct{}), make(chan struct{})
	start := time.Now()
	go func() {
		defer close(stopped)
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			s, err := scrape(url)
			s.at = time.Since(start)
			mu.Lock()
			if err != nil {
				errs = append(errs, err)
			} else {
				samples = append(samples, s)
			}
			mu.Unlock()
		}
	}()
	res := c.run(t, ns)
	close(stop)
	<-stopped
	require.Empty(t, errs, "scrapes of %s", url)
	steady := samples[len(samples)/5:]
	require.GreaterOrEqual(t, len(steady), 5, "too few samples")
	var mins, rss, gor []float64
	for _, s := range steady {
		mins, rss, gor = append(mins, s.at.Minutes()), append(rss, s.rss/(1<<20)), append(gor, s.goroutines)
	}
	rssSlope, gorSlope := slope(mins, rss), slope(mins, gor)
	var perMinute []string
	for i, s := range samples {
		if i%12 == 0 {
			perMinute = append(perMinute, fmt.Sprintf("%.0f", s.rss/(1<<20)))
		}
	}
	t.Logf("RSS each minute, MiB: %s", strings.Join(perMinute, " "))
	t.Logf("figures: %s of churn, %d Todos, %d unarchived; %d samples; RSS %.1f→%.1f MiB (slope %+.2f MiB/min), goroutines %.0f→%.0f (slope %+.2f/min)",
		c.duration, res.created, len(res.unarchived), len(samples), rss[0], rss[len(rss)-1], rssSlope, gor[0], gor[len(gor)-1], gorSlope)
	require.Empty(t, res.unarchived, "deleted Todos never archived")
	var after sample
	eventuallyWithin(t, fmt.Sprintf("the operator's goroutines to come back to within %d of the %.0f before the churn", leakMargin, before.goroutines), 30*time.Second, func() bool {
		after, err = scrape(url)
		return err == nil && after.goroutines <= before.goroutines+leakMargin
	})
	t.Logf("goroutines before the churn %.0f, after it %.0f", before.goroutines, after.goroutines)
	if !full() {
		t.Log("trends not judged: one minute is too short for a slope; make chaos (OPGEN_CHAOS=full) judges them over 20 minutes")
		return
	}
	require.Less(t, gorSlope, 1.0, "goroutines grow")
	require.Less(t, rssSlope, 1.0, "resident memory grows")
}

// leakMargin is how many more goroutines than before a churn an idle
// operator may hold after it: connections and timers opened on the way.
// A churn creates hundreds of objects, so a leak per object or per
// reconcile exceeds it many times over.
const leakMargin = 10

// logTail logs the last n lines of the operator's log when t failed.
func logTail(t *testing.T, path string, n int) {
	if !t.Failed() {
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	lines := strings.Split(string(b), "\n")
	t.Logf("operator log, last %d lines:\n%s", n, strings.Join(lines[max(0, len(lines)-n):], "\n"))
}
