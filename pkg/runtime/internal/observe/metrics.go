package observe

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/client-go/util/workqueue"

	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Metrics are an operator's Prometheus collectors. They live in a registry
// of the operator's own, so that two operators in one process (as in
// tests) do not collide.
type Metrics struct {
	// Registry is served on /metrics.
	Registry *prometheus.Registry
	// Writes counts the pipeline's API writes by controller and what.
	Writes *prometheus.CounterVec
	// Queue is the work queues' MetricsProvider.
	Queue QueueMetrics
	// ShardMembers are the live members the sharder sees; ShardBuckets
	// the buckets this member holds.
	ShardMembers, ShardBuckets prometheus.Gauge
	// Stuck are the actions, by controller, whose handlers still run a
	// grace period after their ActionTimeout (inflight.Stuck).
	Stuck *prometheus.GaugeVec

	reconciles      *prometheus.CounterVec
	reconcileErrors *prometheus.CounterVec
	unknown         *prometheus.CounterVec
	timeouts        *prometheus.CounterVec
	triggers        *prometheus.CounterVec
	hotLoops        *prometheus.CounterVec
	duration        *prometheus.HistogramVec
	leader          prometheus.Gauge
	shardMoves      *prometheus.CounterVec
	shardHandover   prometheus.Histogram
}

// NewMetrics returns the collectors, registered.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "opgen_reconcile_total", Help: "Actions handled, by controller and verb.",
		}, []string{"controller", "verb"}),
		reconcileErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "opgen_reconcile_errors_total", Help: "Actions that failed, by controller, verb and whether the error was terminal (not retried).",
		}, []string{"controller", "verb", "terminal"}),
		unknown: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "opgen_reconcile_unknown_total", Help: "Actions that stopped with the operator (it stopped leading, or shut down) or whose write the fence refused, by controller and verb: whether their last write was stored is unknown; they are not errors and run again.",
		}, []string{"controller", "verb"}),
		timeouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "opgen_reconcile_timeouts_total", Help: "Actions that ran past their controller's ActionTimeout, by controller.",
		}, []string{"controller"}),
		triggers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "opgen_reconcile_triggers_total", Help: "What woke the actions, by controller and kind of trigger (change, start, owned, watched, periodic, requeue, retry, wake, echo): an action woken by two kinds counts once for each.",
		}, []string{"controller", "trigger"}),
		hotLoops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "opgen_hot_loops_total", Help: "Objects found in a hot loop (handled again and again by nothing but the operator's own writes), by controller.",
		}, []string{"controller"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "opgen_reconcile_duration_seconds", Help: "Time to run the pipeline for one action, by controller and verb.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"controller", "verb"}),
		Writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "opgen_api_writes_total", Help: "API writes made by the pipeline steps, by controller and what was written (status, finalizer, descendant, prune).",
		}, []string{"controller", "what"}),
		Stuck: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "opgen_reconcile_stuck", Help: "Actions whose handlers still run a grace period after their controller's ActionTimeout (they ignore the cancelled context), by controller.",
		}, []string{"controller"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "opgen_leader", Help: "1 while this replica holds the leader election lease (or election is off and it works), else 0.",
		}),
	}
	m.ShardMembers = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "opgen_shard_members", Help: "Live members of sharding, as the sharder on the leader sees them (0 elsewhere).",
	})
	m.ShardBuckets = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "opgen_shard_buckets", Help: "Buckets of objects this member of sharding holds (caches and handles).",
	})
	m.shardMoves = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opgen_shard_moves_total", Help: "Buckets moved by the sharder (assign, drain, reassign), or let go (release) and started on (take) by this member, by verb.",
	}, []string{"verb"})
	m.shardHandover = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "opgen_shard_handover_seconds", Help: "From the sharder's drain of a bucket to its assignment to its new member, once the old one let go.",
		Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	})
	m.Queue = newQueueMetrics()
	m.Registry.MustRegister(m.ShardMembers, m.ShardBuckets, m.shardMoves, m.shardHandover)
	m.Registry.MustRegister(m.reconciles, m.reconcileErrors, m.unknown, m.timeouts, m.triggers, m.hotLoops, m.Stuck, m.duration, m.Writes, m.leader,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.Queue.register(m.Registry)
	clientMetrics().register(m.Registry)
	return m
}

// Handle counts the events the metrics are made of: the metrics are a
// subscriber of the operator's telemetry like any other.
func (m *Metrics) Handle(e telemetry.Event) {
	switch e := e.(type) {
	case telemetry.ReconcileWoken:
		for _, k := range e.Triggers.Kinds() {
			m.triggers.WithLabelValues(e.Controller, string(k)).Inc()
		}
	case telemetry.HotLoop:
		m.hotLoops.WithLabelValues(e.Controller).Inc()
	case telemetry.ReconcileSucceeded:
		m.action(e.Reconcile, e.Duration)
	case telemetry.ReconcileFailed:
		m.action(e.Reconcile, e.Duration)
		if e.Unknown {
			m.unknown.WithLabelValues(e.Controller, e.Verb).Inc()
			return
		}
		m.reconcileErrors.WithLabelValues(e.Controller, e.Verb, strconv.FormatBool(e.Terminal)).Inc()
		if !e.Terminal {
			// Counted here, not by the queue: client-go's queue counts every
			// delayed add, periodic requeues included.
			m.Queue.retries.WithLabelValues(e.Controller).Inc()
		}
	case telemetry.ReconcileTimedOut:
		if !e.Stuck {
			m.timeouts.WithLabelValues(e.Controller).Inc()
		}
	case telemetry.ShardMoved:
		m.shardMoves.WithLabelValues(e.Verb).Inc()
		if e.Handover > 0 {
			m.shardHandover.Observe(e.Handover.Seconds())
		}
	case telemetry.LeaderAcquired:
		m.leader.Set(1)
	case telemetry.LeaderLost:
		m.leader.Set(0)
	}
}

func (m *Metrics) action(r telemetry.Reconcile, d time.Duration) {
	m.reconciles.WithLabelValues(r.Controller, r.Verb).Inc()
	m.duration.WithLabelValues(r.Controller, r.Verb).Observe(d.Seconds())
}

// QueueMetrics implement client-go's workqueue.MetricsProvider with
// opgen_workqueue_* metrics labelled by queue name (the controller name).
type QueueMetrics struct {
	depth, lanes, unfinished, longest *prometheus.GaugeVec
	adds, retries                     *prometheus.CounterVec
	latency, work                     *prometheus.HistogramVec
}

var _ workqueue.MetricsProvider = QueueMetrics{}

func newQueueMetrics() QueueMetrics {
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "opgen_workqueue_" + name, Help: help}, []string{"name"})
	}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opgen_workqueue_" + name, Help: help}, []string{"name"})
	}
	histogram := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "opgen_workqueue_" + name, Help: help,
			Buckets: prometheus.ExponentialBuckets(1e-5, 4, 12)}, []string{"name"})
	}
	return QueueMetrics{
		depth: gauge("depth", "Keys waiting in the queue."),
		lanes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "opgen_workqueue_lane_depth",
			Help: "Keys waiting in each lane of the queue: finalize (objects that lack their finalizer), user (changes someone made, and their retries), bulk (the rest)."},
			[]string{"name", "lane"}),
		unfinished: gauge("unfinished_work_seconds", "Seconds of work in progress not yet finished."),
		longest:    gauge("longest_running_processor_seconds", "Seconds the longest running handler has been running."),
		adds:       counter("adds_total", "Keys added to the queue."),
		retries:    counter("retries_total", "Keys requeued after an error."),
		latency:    histogram("queue_duration_seconds", "Seconds a key waits in the queue before a worker takes it."),
		work:       histogram("work_duration_seconds", "Seconds a worker takes to handle a key."),
	}
}

func (q QueueMetrics) register(r *prometheus.Registry) {
	r.MustRegister(q.depth, q.lanes, q.unfinished, q.longest, q.adds, q.retries, q.latency, q.work)
}

// LaneDepth returns what sets the depth of each lane of queue name
// (lanes.Queue.Depth); every lane starts at 0.
func (q QueueMetrics) LaneDepth(name string, lanes []string) func(lane string, depth int) {
	for _, l := range lanes {
		q.lanes.WithLabelValues(name, l).Set(0)
	}
	return func(lane string, depth int) { q.lanes.WithLabelValues(name, lane).Set(float64(depth)) }
}

func (q QueueMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	return q.depth.WithLabelValues(name)
}
func (q QueueMetrics) NewAddsMetric(name string) workqueue.CounterMetric {
	return q.adds.WithLabelValues(name)
}
func (q QueueMetrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return q.latency.WithLabelValues(name)
}
func (q QueueMetrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return q.work.WithLabelValues(name)
}
func (q QueueMetrics) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return q.unfinished.WithLabelValues(name)
}
func (q QueueMetrics) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return q.longest.WithLabelValues(name)
}

// NewRetriesMetric gives the queue a counter that counts nothing: the
// queue would count every AddAfter (periodic requeues too); Metrics.Handle
// counts requeues after an error.
func (q QueueMetrics) NewRetriesMetric(string) workqueue.CounterMetric {
	return noopCounter{}
}

type noopCounter struct{}

func (noopCounter) Inc() {}
