package task

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Results of a run, the result label of opgen_task_runs_total.
const (
	ResultSuccess = "success"
	ResultError   = "error"
)

// subscribeMetrics counts TaskRan events in the operator's registry, once
// per operator however many runners it has.
func subscribeMetrics(op *runtime.Operator) {
	mine := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opgen_task_runs_total", Help: "Runs of periodic tasks, by task and result (success, error).",
	}, []string{"task", "result"})
	runs := runtime.SharedCollector(op, mine)
	if runs != mine {
		return // another runner of op counts already
	}
	duration := runtime.SharedCollector(op, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "opgen_task_duration_seconds", Help: "Time a periodic task's run took, by task.",
		Buckets: prometheus.ExponentialBuckets(1e-3, 4, 10),
	}, []string{"task"}))
	telemetry.On(op.Telemetry(), func(e telemetry.TaskRan) {
		result := ResultSuccess
		if e.Err != nil {
			result = ResultError
		}
		runs.WithLabelValues(e.Task, result).Inc()
		duration.WithLabelValues(e.Task).Observe(e.Duration.Seconds())
	})
}
