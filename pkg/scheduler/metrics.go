package scheduler

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Results of a scheduling attempt, the result label of the metrics.
const (
	ResultBound         = "bound"
	ResultUnschedulable = "unschedulable"
	ResultError         = "error"
)

type metrics struct {
	bindings *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// subscribeMetrics counts the scheduler's telemetry events in the
// operator's registry; the collectors are shared by all schedulers of the
// operator.
func subscribeMetrics(op *runtime.Operator, name string) {
	m := &metrics{
		bindings: runtime.SharedCollector(op, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "opgen_scheduler_bindings_total", Help: "Scheduling attempts, by scheduler and result (bound, unschedulable, error).",
		}, []string{"scheduler", "result"})),
		duration: runtime.SharedCollector(op, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "opgen_scheduler_attempt_duration_seconds", Help: "Time to select a node and bind, by scheduler and result.",
			Buckets: prometheus.ExponentialBuckets(1e-4, 4, 10),
		}, []string{"scheduler", "result"})),
	}
	telemetry.On(op.Telemetry(), func(e telemetry.BindSucceeded) {
		if e.Scheduler == name {
			m.observe(name, ResultBound, e.Duration.Seconds())
		}
	})
	telemetry.On(op.Telemetry(), func(e telemetry.BindFailed) {
		if e.Scheduler != name {
			return
		}
		result := ResultError
		if e.Unschedulable {
			result = ResultUnschedulable
		}
		m.observe(name, result, e.Duration.Seconds())
	})
}

func (m *metrics) observe(name, result string, seconds float64) {
	m.bindings.WithLabelValues(name, result).Inc()
	m.duration.WithLabelValues(name, result).Observe(seconds)
}
