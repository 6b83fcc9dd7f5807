package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// metrics are the fleet's own series, in the home operator's registry,
// and the gatherer of its clusters' series.
type metrics struct {
	f        *Fleet
	engagedG *prometheus.GaugeVec
	failures *prometheus.CounterVec
	engage   prometheus.Histogram
	ready    *prometheus.Desc
}

func newMetrics(f *Fleet) *metrics {
	return &metrics{
		f: f,
		engagedG: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "opgen_fleet_cluster_engaged", Help: "1 while this replica engages the cluster: its operator runs here.",
		}, []string{"cluster"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "opgen_fleet_cluster_failures_total", Help: "Times a cluster's operator could not be built or stopped on its own, by cluster.",
		}, []string{"cluster"}),
		engage: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "opgen_fleet_engage_seconds", Help: "From the start of a cluster's operator to its caches synced.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}),
		ready: prometheus.NewDesc("opgen_fleet_cluster_ready",
			"1 when an engaged cluster is ready (its caches synced, its API server answers), else 0.", []string{"cluster"}, nil),
	}
}

// register adds the series to op's registry, and the clusters' series to
// what op serves on /metrics.
func (m *metrics) register(op *runtime.Operator) error {
	for _, c := range []prometheus.Collector{m.engagedG, m.failures, m.engage, m} {
		if err := op.Registry().Register(c); err != nil {
			return fmt.Errorf("fleet.New: register the fleet's metrics: %w", err)
		}
	}
	op.AddGatherer(prometheus.GathererFunc(m.f.gatherClusters))
	return nil
}

func (m *metrics) engaged(name string, on bool) {
	if on {
		m.engagedG.WithLabelValues(name).Set(1)
		return
	}
	m.engagedG.DeleteLabelValues(name)
	m.failures.DeleteLabelValues(name)
}

// observeEngage records how long c's caches took to sync.
func (m *metrics) observeEngage(ctx context.Context, c *cluster) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for !c.op.Ready() {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
	d := time.Since(c.since)
	m.engage.Observe(d.Seconds())
	m.f.log.Info("the cluster's caches synced", "cluster", c.name, "took", d.Round(time.Millisecond))
}

// Describe and Collect make opgen_fleet_cluster_ready, asked of each
// cluster when scraped.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) { ch <- m.ready }

func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	for name, err := range m.f.checkClusters(context.Background()) {
		v := 1.0
		if err != nil {
			v = 0
		}
		ch <- prometheus.MustNewConstMetric(m.ready, prometheus.GaugeValue, v, name)
	}
}

// checkClusters asks each engaged cluster's operator whether it is
// ready, all at once, each for at most 2 seconds.
func (f *Fleet) checkClusters(ctx context.Context) map[string]error {
	f.mu.Lock()
	ops := make(map[string]*runtime.Operator, len(f.running))
	for n, c := range f.running {
		ops[n] = c.op
	}
	f.mu.Unlock()
	out := make(map[string]error, len(ops))
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for name, op := range ops {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			err := op.CheckReady(cctx)
			mu.Lock()
			out[name] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// readyCheck is the home operator's ready check "clusters": degraded, not
// failed, while some engaged cluster is not ready, since the others work.
func (f *Fleet) readyCheck(r *http.Request) error {
	res := f.checkClusters(r.Context())
	var bad []string
	for name, err := range res {
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", name, err))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	return runtime.Degraded(fmt.Errorf("%d of %d clusters not ready: %s", len(bad), len(res), strings.Join(bad, "; ")))
}

// gatherClusters gathers the opgen_ series of every engaged cluster's
// operator, with a label cluster when more than one is engaged. The
// process-wide series (Go, process, client-go) come from the home
// operator's registry once.
func (f *Fleet) gatherClusters() ([]*dto.MetricFamily, error) {
	f.mu.Lock()
	clusters := make([]*cluster, 0, len(f.running))
	for _, c := range f.running {
		clusters = append(clusters, c)
	}
	f.mu.Unlock()
	slices.SortFunc(clusters, func(a, b *cluster) int { return strings.Compare(a.name, b.name) })
	labelled := len(clusters) > 1
	byName := map[string]*dto.MetricFamily{}
	var errs []error
	for _, c := range clusters {
		families, err := c.op.Registry().Gather()
		if err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: %w", c.name, err))
		}
		for _, mf := range families {
			if !clusterSeries(mf.GetName()) {
				continue
			}
			if labelled {
				for _, m := range mf.Metric {
					m.Label = withLabel(m.Label, "cluster", c.name)
				}
			}
			if have, ok := byName[mf.GetName()]; ok {
				have.Metric = append(have.Metric, mf.Metric...)
			} else {
				byName[mf.GetName()] = mf
			}
		}
	}
	out := make([]*dto.MetricFamily, 0, len(byName))
	for _, mf := range byName {
		out = append(out, mf)
	}
	slices.SortFunc(out, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	return out, errors.Join(errs...)
}

// clusterSeries tells the series a cluster's operator reports of its own
// cluster: opgen_ ones, but not those of election and sharding, which the
// fleet does in the home cluster.
func clusterSeries(name string) bool {
	return strings.HasPrefix(name, "opgen_") && name != "opgen_leader" && !strings.HasPrefix(name, "opgen_shard_")
}

// withLabel returns labels with name=value added, sorted by name as the
// exposition format wants.
func withLabel(labels []*dto.LabelPair, name, value string) []*dto.LabelPair {
	labels = append(labels, &dto.LabelPair{Name: &name, Value: &value})
	slices.SortFunc(labels, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	return labels
}
