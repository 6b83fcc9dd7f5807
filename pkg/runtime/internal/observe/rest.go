package observe

import (
	"context"
	"net/url"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientmetrics "k8s.io/client-go/tools/metrics"
)

// client-go reports every REST request it makes to the hooks of package
// k8s.io/client-go/tools/metrics. Those hooks are process-wide and can be
// set once (metrics.Register keeps the first registration), so opgen sets
// them once per process to the collectors below, which every operator's
// registry then serves. Two consequences, both rare outside tests:
//
//   - Several operators in one process share the rest_client_* series
//     (they are told apart by the host label only when they talk to
//     different API servers).
//   - When another package registered client-go's metrics first (such as
//     k8s.io/component-base/metrics/prometheus/restclient, or
//     controller-runtime in the same binary), client-go reports to it and
//     the operator's registry has no rest_client_* series; the operator
//     logs so when it starts serving metrics.
//
// The names and labels are those of Kubernetes' own components and of
// controller-runtime, so that existing dashboards work.

// restClientMetrics are client-go's REST metrics.
type restClientMetrics struct {
	requests    *prometheus.CounterVec   // by code, method, host
	retries     *prometheus.CounterVec   // by code, method, host
	latency     *prometheus.HistogramVec // by verb, host
	rateLimiter *prometheus.HistogramVec // by verb, host
}

var (
	restMetricsOnce sync.Once
	restMetrics     *restClientMetrics // nil when another package registered first
)

// client-go's hooks are plain variables its requests read: they are set
// while the package initializes, before any request can be in flight (as
// client-go asks), not in the first New, which may race with requests of
// clients made earlier.
func init() { clientMetrics() }

// clientMetrics registers opgen's collectors with client-go once per
// process and returns them, or nil when client-go reports elsewhere.
func clientMetrics() *restClientMetrics {
	restMetricsOnce.Do(func() {
		buckets := []float64{.005, .025, .1, .25, .5, 1, 2, 4, 8, 15, 30, 60}
		m := &restClientMetrics{
			requests: prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "rest_client_requests_total", Help: "HTTP requests to the API server, by status code, method and host.",
			}, []string{"code", "method", "host"}),
			retries: prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "rest_client_request_retries_total", Help: "HTTP requests to the API server retried by client-go, by status code, method and host.",
			}, []string{"code", "method", "host"}),
			latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
				Name: "rest_client_request_duration_seconds", Help: "Seconds an HTTP request to the API server took, by verb and host.", Buckets: buckets,
			}, []string{"verb", "host"}),
			rateLimiter: prometheus.NewHistogramVec(prometheus.HistogramOpts{
				Name: "rest_client_rate_limiter_duration_seconds", Help: "Seconds a request waited for the client-side rate limiter (QPS, Burst), by verb and host.", Buckets: buckets,
			}, []string{"verb", "host"}),
		}
		result := requestResult{m.requests}
		clientmetrics.Register(clientmetrics.RegisterOpts{
			RequestResult:      result,
			RequestRetry:       requestRetry{m.retries},
			RequestLatency:     latency{m.latency},
			RateLimiterLatency: latency{m.rateLimiter},
		})
		if clientmetrics.RequestResult == clientmetrics.ResultMetric(result) {
			restMetrics = m
		}
	})
	return restMetrics
}

// RESTMetrics reports whether the operators' registries serve client-go's
// REST metrics: false when another package registered them first.
func RESTMetrics() bool { return clientMetrics() != nil }

func (m *restClientMetrics) register(r *prometheus.Registry) {
	if m != nil {
		r.MustRegister(m.requests, m.retries, m.latency, m.rateLimiter)
	}
}

type requestResult struct{ v *prometheus.CounterVec }

func (r requestResult) Increment(_ context.Context, code, method, host string) {
	r.v.WithLabelValues(code, method, host).Inc()
}

type requestRetry struct{ v *prometheus.CounterVec }

func (r requestRetry) IncrementRetry(_ context.Context, code, method, host string) {
	r.v.WithLabelValues(code, method, host).Inc()
}

type latency struct{ v *prometheus.HistogramVec }

func (l latency) Observe(_ context.Context, verb string, u url.URL, d time.Duration) {
	l.v.WithLabelValues(verb, u.Host).Observe(d.Seconds())
}

var (
	_ clientmetrics.ResultMetric  = requestResult{}
	_ clientmetrics.RetryMetric   = requestRetry{}
	_ clientmetrics.LatencyMetric = latency{}
)
