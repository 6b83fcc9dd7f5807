package runtime

import (
	"context"
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/securemetrics"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/serving"
)

// The operator's endpoints (/metrics, /healthz and /readyz, pprof) and
// the Runnables of every replica run in package internal/serving. These
// are the Operator's doors to them.

// Secure metrics' certificate files in Options.MetricsCertDir: the keys of
// a kubernetes.io/tls Secret, as cert-manager writes them.
const (
	MetricsCertFile = securemetrics.CertFile
	MetricsKeyFile  = securemetrics.KeyFile
)

// Check is a user health or readiness check: nil means healthy. It gets
// the probe's request (its context ends with the probe).
type Check func(*http.Request) error

// AddHealthCheck adds a check to /healthz: when it fails, /healthz answers
// 500 with the check's name and error, and the kubelet restarts the
// container after the liveness probe's failureThreshold. Keep it cheap and
// about this process only (a deadlock, a wedged loop), not about the API
// server or other services: a restart does not fix those. Names are
// unique; checks may be added before or while the operator runs.
func (o *Operator) AddHealthCheck(name string, check Check) error {
	return o.checks.AddHealth("AddHealthCheck", name, check)
}

// AddReadyCheck adds a check to /readyz: when it fails, /readyz answers
// 503 with the check's name and error, and the Pod leaves its Services'
// endpoints (the operator keeps working; readiness only gates traffic to
// the Pod, such as webhooks). Names are unique; checks may be added before
// or while the operator runs.
func (o *Operator) AddReadyCheck(name string, check Check) error {
	return o.checks.AddReady("AddReadyCheck", name, check)
}

// Degraded wraps the error of a ready check that /readyz shows without
// failing: the operator works, in part. A fleet reports a cluster it
// cannot reach so.
func Degraded(err error) error { return serving.Degraded(err) }

// CheckReady returns what /readyz answers: nil when every cache has
// synced, none waits for the API server, the API server answers, every
// ready check (AddReadyCheck) passes or is only Degraded, and, with
// Options.StuckHandlersFailReady, no handler is stuck; else the first
// reason it is not. A fleet asks it of each of its clusters.
func (o *Operator) CheckReady(ctx context.Context) error {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, "/readyz", nil)
	if err != nil {
		return err
	}
	_, err = o.readiness(r)
	return err
}

// readiness is what /readyz answers, with the notes of degraded checks.
func (o *Operator) readiness(r *http.Request) ([]string, error) {
	switch {
	case !o.ready.Load():
		return nil, errors.New("caches not synced yet")
	case o.outage.Waiting():
		return nil, errors.New("caches wait for the API server to watch again")
	}
	if err := o.relists.Waiting(); err != nil {
		return nil, err
	}
	if err := o.probe.Get(r.Context()); err != nil {
		return nil, err
	}
	notes, err := o.checks.Ready(r)
	if stuck := o.stuck.Err(); stuck != nil && err == nil {
		if o.opts.StuckHandlersFailReady {
			return notes, stuck
		}
		notes = append(notes, "handlers degraded: "+stuck.Error())
	}
	return notes, err
}

// startServers listens on the configured addresses ("0" disables one).
func (o *Operator) startServers() (*serving.Servers, error) {
	o.mu.Lock()
	g := append(prometheus.Gatherers{o.metrics.Registry}, o.gatherers...)
	o.mu.Unlock()
	return serving.Start(serving.Config{
		MetricsAddr:     o.opts.MetricsAddr,
		HealthAddr:      o.opts.HealthAddr,
		PprofAddr:       o.opts.PprofAddr,
		MetricsInsecure: o.opts.MetricsInsecure,
		MetricsCertDir:  o.opts.MetricsCertDir,
		Metrics:         promhttp.HandlerFor(g, promhttp.HandlerOpts{Registry: o.metrics.Registry}),
		RESTConfig:      o.config,
		HTTPClient:      o.httpClient,
		Health:          o.checks.Health,
		Ready:           o.readiness,
		Log:             o.log,
	})
}

// MetricsAddr returns the address /metrics is served on once Run listens
// (useful with ":0"), or "" when disabled or not listening yet.
func (o *Operator) MetricsAddr() string {
	if s := o.servers.Load(); s != nil {
		return s.MetricsAddr()
	}
	return ""
}

// HealthAddr returns the address /healthz and /readyz are served on once
// Run listens, or "" when disabled or not listening yet.
func (o *Operator) HealthAddr() string {
	if s := o.servers.Load(); s != nil {
		return s.HealthAddr()
	}
	return ""
}

// PprofAddr returns the address net/http/pprof is served on once Run
// listens, or "" when off (the default) or not listening yet.
func (o *Operator) PprofAddr() string {
	if s := o.servers.Load(); s != nil {
		return s.PprofAddr()
	}
	return ""
}
