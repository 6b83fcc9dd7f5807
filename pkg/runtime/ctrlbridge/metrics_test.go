package ctrlbridge_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/pkg/runtime/ctrlbridge"
)

// TestGatheredServesEverySeriesInTheHostRegistry: counters, gauges,
// histograms and summaries of one registry come out of another the same,
// less the host's own Go series.
func TestGatheredServesEverySeriesInTheHostRegistry(t *testing.T) {
	from := prometheus.NewRegistry()
	counter := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opgen_reconcile_total", Help: "Actions."}, []string{"controller", "verb"})
	gauge := prometheus.NewGauge(prometheus.GaugeOpts{Name: "opgen_leader", Help: "Leading."})
	histogram := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "opgen_reconcile_duration_seconds", Help: "Time.", Buckets: []float64{0.1, 1}})
	summary := prometheus.NewSummary(prometheus.SummaryOpts{Name: "opgen_summary", Help: "A summary.", Objectives: map[float64]float64{0.5: 0.05}})
	from.MustRegister(counter, gauge, histogram, summary, collectors.NewGoCollector())
	counter.WithLabelValues("gadget", "Add").Add(3)
	gauge.Set(1)
	histogram.Observe(0.5)
	histogram.Observe(2)
	summary.Observe(4)

	host := prometheus.NewRegistry()
	host.MustRegister(collectors.NewGoCollector())
	host.MustRegister(ctrlbridge.Gathered(from, ctrlbridge.HostSeries))

	const want = `
# HELP opgen_leader Leading.
# TYPE opgen_leader gauge
opgen_leader 1
# HELP opgen_reconcile_duration_seconds Time.
# TYPE opgen_reconcile_duration_seconds histogram
opgen_reconcile_duration_seconds_bucket{le="0.1"} 0
opgen_reconcile_duration_seconds_bucket{le="1"} 1
opgen_reconcile_duration_seconds_bucket{le="+Inf"} 2
opgen_reconcile_duration_seconds_sum 2.5
opgen_reconcile_duration_seconds_count 2
# HELP opgen_reconcile_total Actions.
# TYPE opgen_reconcile_total counter
opgen_reconcile_total{controller="gadget",verb="Add"} 3
# HELP opgen_summary A summary.
# TYPE opgen_summary summary
opgen_summary{quantile="0.5"} 4
opgen_summary_sum 4
opgen_summary_count 1
`
	require.NoError(t, testutil.GatherAndCompare(host, strings.NewReader(want),
		"opgen_leader", "opgen_reconcile_duration_seconds", "opgen_reconcile_total", "opgen_summary"))
	n, err := testutil.GatherAndCount(host, "go_goroutines")
	require.NoError(t, err, "the Go series are the host's once, not twice")
	assert.Equal(t, 1, n)
}

// TestGatheredReportsAFailedGather: a gatherer's error fails the scrape
// with its message, rather than serving a silent gap.
func TestGatheredReportsAFailedGather(t *testing.T) {
	host := prometheus.NewRegistry()
	host.MustRegister(ctrlbridge.Gathered(failing{}, nil))
	_, err := host.Gather()
	require.ErrorContains(t, err, "the operator's registry is gone")
}

type failing struct{}

func (failing) Gather() ([]*dto.MetricFamily, error) {
	return nil, errors.New("the operator's registry is gone")
}
