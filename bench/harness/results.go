package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// results are the raw numbers of one run, written as JSON beside the table.
type results struct {
	Date    string            `json:"date"`
	Machine map[string]string `json:"machine"`
	// Settings are the parameters every benchmark ran with.
	Settings map[string]any `json:"settings"`
	// Setup is the creation of the objects.
	Setup map[string]float64 `json:"setup,omitempty"`
	// ObjectBytes is the JSON size of one benchmark object, with and
	// without managedFields.
	ObjectBytes map[string]float64 `json:"objectBytes,omitempty"`
	// Raw holds the raw client-go bounds: metric → per-round values.
	Raw map[string][]float64 `json:"raw"`
	// Metrics holds every benchmark's values: metric → variant → one value
	// per round, in round order.
	Metrics map[string]map[string][]float64 `json:"metrics"`
	// Codegen is the bench/codegen measurement: name → seconds (median).
	Codegen map[string]float64 `json:"codegen,omitempty"`
	Phases  []phaseTime        `json:"phases"`
	Errors  []string           `json:"errors,omitempty"`
	Total   float64            `json:"totalSeconds"`
	// Exits are the operators of the sharding benchmark that exited on
	// their own; their rounds were run again.
	Exits []memberExit `json:"exits,omitempty"`
	// Commit is the commit measured by a run that compares no refs: the
	// working tree's (the reports are named after it).
	Commit *side `json:"commit,omitempty"`
	// Sides are the two commits of a comparison (-compare), by side.
	Sides map[string]side `json:"sides,omitempty"`
	// CompareNotes are what a comparison's reader must know about its
	// sides (whether the instrumentation differs).
	CompareNotes []string `json:"compareNotes,omitempty"`
}

// phaseTime is how long a phase took, with the machine's load averages
// (1, 5 and 15 minutes) at its start and end.
type phaseTime struct {
	Name      string  `json:"name"`
	Seconds   float64 `json:"seconds"`
	LoadStart string  `json:"loadStart,omitempty"`
	LoadEnd   string  `json:"loadEnd,omitempty"`
}

func newResults(c config) *results {
	return &results{
		Date: time.Now().Format("2006-01-02"),
		Settings: map[string]any{
			"quick": c.quick, "rounds": c.rounds, "smallN": c.small, "largeN": c.large,
			"workers": c.workers, "throughputWorkers": c.tpWorkers,
			"windowSeconds": c.window.Seconds(), "rawWindowSeconds": c.rawWindow.Seconds(), "rawRounds": c.rawRounds,
			"latencyWritesPerSecond": c.latencyRate, "latencySeconds": c.latencyFor.Seconds(),
			"steadyWindowSeconds": c.steadyWindow.Seconds(), "steadyRequeueSeconds": c.steadyPeriod.Seconds(),
			"qps": c.qps, "burst": c.burst, "watchListClient": c.watchList,
			"failoverLease":    map[string]float64{"durationSeconds": c.failover.duration.Seconds(), "renewDeadlineSeconds": c.failover.renew.Seconds(), "retryPeriodSeconds": c.failover.retry.Seconds()},
			"steadyStateLease": map[string]float64{"durationSeconds": c.stockLease.duration.Seconds(), "renewDeadlineSeconds": c.stockLease.renew.Seconds(), "retryPeriodSeconds": c.stockLease.retry.Seconds()},
			"codegenRuns":      c.codegenRuns,
		},
		Raw:     map[string][]float64{},
		Metrics: map[string]map[string][]float64{},
	}
}

func (r *results) machine(start time.Time) {
	r.Machine = map[string]string{
		"cpus":           strconv.Itoa(runtime.NumCPU()),
		"go":             runtime.Version(),
		"loadavgAtStart": loadavg(),
		"started":        start.Format(time.RFC3339),
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		r.Machine["memTotal"] = strings.Join(strings.Fields(strings.SplitN(string(data), "\n", 2)[0])[1:], " ")
	}
}

func (r *results) finish(start time.Time) {
	r.Total = time.Since(start).Seconds()
	r.Machine["loadavgAtEnd"] = loadavg()
}

func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}

// add records one round's value of metric for variant.
func (r *results) add(metric, variant string, v float64) {
	if r.Metrics[metric] == nil {
		r.Metrics[metric] = map[string][]float64{}
	}
	r.Metrics[metric][variant] = append(r.Metrics[metric][variant], v)
}

func (r *results) get(metric, variant string) []float64 { return r.Metrics[metric][variant] }

// mark is how many values each series held at one moment.
type mark map[string]map[string]int

// mark returns where every series ends now, for rollback.
func (r *results) mark() mark {
	m := mark{}
	for metric, byVariant := range r.Metrics {
		m[metric] = map[string]int{}
		for v, vals := range byVariant {
			m[metric][v] = len(vals)
		}
	}
	return m
}

// rollback drops every value added since m: the values of a round that
// did not finish, so that a round run again does not count twice.
func (r *results) rollback(m mark) {
	for metric, byVariant := range r.Metrics {
		for v, vals := range byVariant {
			n, ok := m[metric][v]
			if !ok {
				delete(byVariant, v)
				continue
			}
			byVariant[v] = vals[:n]
		}
		if len(byVariant) == 0 {
			delete(r.Metrics, metric)
		}
	}
}

func (s *suite) measureObjectSize(ctx context.Context) error {
	u, err := s.dyn.Resource(gvr(opgenGroup)).Namespace(rawNamespace).Get(ctx, objectName(0), metav1.GetOptions{})
	if err != nil {
		return err
	}
	full, _ := json.Marshal(u.Object)
	u.SetManagedFields(nil)
	stripped, _ := json.Marshal(u.Object)
	s.res.ObjectBytes = map[string]float64{"withManagedFields": float64(len(full)), "withoutManagedFields": float64(len(stripped))}
	logf("   one object: %d B of JSON, %d B without managedFields", len(full), len(stripped))
	return nil
}

// summary of one series of per-round values.
type summary struct{ med, min, max float64 }

func summarize(v []float64) (summary, bool) {
	if len(v) == 0 {
		return summary{}, false
	}
	return summary{med: median(v), min: slices.Min(v), max: slices.Max(v)}, true
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// percentile returns the p-th percentile (0–100) of v, nearest rank.
func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// ratios divides a by b round by round (values of the same round).
func ratios(a, b []float64) []float64 {
	var out []float64
	for i := range min(len(a), len(b)) {
		if b[i] != 0 {
			out = append(out, a[i]/b[i])
		}
	}
	return out
}
