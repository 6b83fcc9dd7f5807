package ctrlbridge

import (
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Gathered is a Collector of what from gathers, less the families skip
// names: registered in another registry, it serves the series of from
// there. The operator's registry joins the manager's so, one /metrics for
// both runtimes. It is an unchecked collector (it describes nothing): its
// families are known only when gathered. A failure to gather is reported
// as an invalid metric, which fails the scrape with its error.
func Gathered(from prometheus.Gatherer, skip func(name string) bool) prometheus.Collector {
	g := &gathered{from: from, skip: skip}
	g.active.Store(true)
	return g
}

type gathered struct {
	from prometheus.Gatherer
	skip func(name string) bool
	// active is false once the operator stopped: a registry cannot drop
	// an unchecked collector, so a stopped operator's series are left
	// out this way (a manager made again in the same process, as in
	// tests, registers the new operator's).
	active atomic.Bool
}

var gatherFailed = prometheus.NewDesc("opgen_gather_failed", "The operator's metrics could not be gathered.", nil, nil)

// Describe describes nothing: the collector is unchecked.
func (*gathered) Describe(chan<- *prometheus.Desc) {}

// Collect sends every series gathered.
func (g *gathered) Collect(ch chan<- prometheus.Metric) {
	if !g.active.Load() {
		return
	}
	families, err := g.from.Gather()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(gatherFailed, err)
	}
	for _, f := range families {
		if g.skip != nil && g.skip(f.GetName()) {
			continue
		}
		for _, m := range f.GetMetric() {
			metric, err := constMetric(f, m)
			if err != nil {
				metric = prometheus.NewInvalidMetric(gatherFailed, err)
			}
			ch <- metric
		}
	}
}

// constMetric makes a constant metric of one series of a family.
func constMetric(f *dto.MetricFamily, m *dto.Metric) (prometheus.Metric, error) {
	names := make([]string, len(m.GetLabel()))
	values := make([]string, len(m.GetLabel()))
	for i, l := range m.GetLabel() {
		names[i], values[i] = l.GetName(), l.GetValue()
	}
	desc := prometheus.NewDesc(f.GetName(), f.GetHelp(), names, nil)
	switch f.GetType() {
	case dto.MetricType_COUNTER:
		return prometheus.NewConstMetric(desc, prometheus.CounterValue, m.GetCounter().GetValue(), values...)
	case dto.MetricType_GAUGE:
		return prometheus.NewConstMetric(desc, prometheus.GaugeValue, m.GetGauge().GetValue(), values...)
	case dto.MetricType_UNTYPED:
		return prometheus.NewConstMetric(desc, prometheus.UntypedValue, m.GetUntyped().GetValue(), values...)
	case dto.MetricType_HISTOGRAM:
		h := m.GetHistogram()
		buckets := make(map[float64]uint64, len(h.GetBucket()))
		for _, b := range h.GetBucket() {
			buckets[b.GetUpperBound()] = b.GetCumulativeCount()
		}
		return prometheus.NewConstHistogram(desc, h.GetSampleCount(), h.GetSampleSum(), buckets, values...)
	case dto.MetricType_SUMMARY:
		s := m.GetSummary()
		quantiles := make(map[float64]float64, len(s.GetQuantile()))
		for _, q := range s.GetQuantile() {
			quantiles[q.GetQuantile()] = q.GetValue()
		}
		return prometheus.NewConstSummary(desc, s.GetSampleCount(), s.GetSampleSum(), quantiles, values...)
	}
	return nil, fmt.Errorf("ctrlbridge: %s is a %s, which the manager's /metrics does not serve", f.GetName(), f.GetType())
}
