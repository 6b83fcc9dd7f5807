package runtime

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/observe"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/securemetrics"
)

// servers runs the metrics and health endpoints.
type servers struct {
	metricsAddr, healthAddr string // bound addresses, once listening
	metricsSecure           bool   // /metrics is served over HTTPS
	pprofAddr               string
	http                    []*http.Server
	errorLog                *log.Logger
	// ctx ends when the servers stop (it runs the metrics certificate's
	// file watch).
	ctx    context.Context
	cancel context.CancelFunc
}

// start listens on the configured addresses ("0" disables one) and serves
// /metrics, /healthz and /readyz.
func (o *Operator) startServers() (*servers, error) {
	s := &servers{errorLog: serverErrorLog(o.log)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	health := http.NewServeMux()
	health.HandleFunc("/healthz", o.healthHandler)
	health.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		notes, err := o.checkReady(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	})
	if err := o.startPprof(s); err != nil {
		return s, err
	}
	if o.opts.MetricsInsecure && o.opts.MetricsAddr == o.opts.HealthAddr && o.opts.MetricsAddr != "0" {
		health.Handle("/metrics", o.metricsHandler())
		addr, err := s.serve(o.opts.HealthAddr, health, "Options.HealthAddr and Options.MetricsAddr")
		s.metricsAddr, s.healthAddr = addr, addr
		return s, err
	}
	if o.opts.MetricsAddr != "0" {
		if err := o.startMetrics(s); err != nil {
			return s, err
		}
	}
	var err error
	if o.opts.HealthAddr != "0" {
		s.healthAddr, err = s.serve(o.opts.HealthAddr, health, "Options.HealthAddr (--health-probe-bind-address)")
	}
	return s, err
}

func (o *Operator) metricsHandler() http.Handler {
	o.mu.Lock()
	defer o.mu.Unlock()
	g := append(prometheus.Gatherers{o.metrics.Registry}, o.gatherers...)
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{Registry: o.metrics.Registry})
}

// startMetrics serves /metrics on its own address: over HTTPS to
// authenticated and authorized requests, or over HTTP to anyone with
// Options.MetricsInsecure.
func (o *Operator) startMetrics(s *servers) error {
	const option = "Options.MetricsAddr (--metrics-bind-address)"
	if !observe.RESTMetrics() {
		o.log.Info("client-go's REST metrics were registered by another package: /metrics has no rest_client_* series")
	}
	mux := http.NewServeMux()
	var err error
	if o.opts.MetricsInsecure {
		mux.Handle("/metrics", o.metricsHandler())
		s.metricsAddr, err = s.serve(o.opts.MetricsAddr, mux, option)
		return err
	}
	auth := securemetrics.NewAuth(o.clientset, o.log.WithName("metrics"))
	cfg, err := securemetrics.TLS(s.ctx, o.opts.MetricsCertDir)
	if err != nil {
		return err
	}
	mux.Handle("/metrics", auth.Wrap(o.metricsHandler()))
	s.metricsSecure = true
	s.metricsAddr, err = s.serveTLS(o.opts.MetricsAddr, mux, cfg, option)
	return err
}

// metricsURL spells the metrics address as a URL, or "off".
func (s *servers) metricsURL() string {
	u := addrOrOff(s.metricsAddr, "/metrics")
	if s.metricsSecure {
		u = strings.Replace(u, "http://", "https://", 1)
	}
	return u
}

// serverErrorLog sends what net/http logs (a failed TLS handshake, a
// panicking handler) to the operator's logger at V(1), so that JSON logs
// stay JSON.
func serverErrorLog(l logr.Logger) *log.Logger {
	return slog.NewLogLogger(logr.ToSlogHandler(l.WithName("http")), slog.Level(-1))
}

// apiProbe answers whether the API server is reachable, from a GET of its
// /readyz made at most once a second (probes of several kubelets and
// scrapers share one request).
type apiProbe struct {
	check func(ctx context.Context) error
	host  string

	mu   sync.Mutex
	at   time.Time
	last error
}

const probeTTL = time.Second

func (p *apiProbe) get(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.at.IsZero() && time.Since(p.at) < probeTTL {
		return p.last
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	p.last = nil
	if err := p.check(ctx); err != nil {
		p.last = fmt.Errorf("the API server at %s is not reachable or not ready: %w", p.host, err)
	}
	p.at = time.Now()
	return p.last
}

// CheckReady returns what /readyz answers: nil when every cache has
// synced, none waits for the API server, the API server answers and every
// ready check (AddReadyCheck) passes or is only Degraded; else the first
// reason it is not. A fleet asks it of each of its clusters.
func (o *Operator) CheckReady(ctx context.Context) error {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, "/readyz", nil)
	if err != nil {
		return err
	}
	_, err = o.checkReady(r)
	return err
}

// checkReady returns the notes of degraded checks too.
func (o *Operator) checkReady(r *http.Request) ([]string, error) {
	switch {
	case !o.ready.Load():
		return nil, errors.New("caches not synced yet")
	case o.outage.Waiting():
		return nil, errors.New("caches wait for the API server to watch again")
	}
	if err := o.relists.waiting(); err != nil {
		return nil, err
	}
	if err := o.probe.get(r.Context()); err != nil {
		return nil, err
	}
	return o.readyChecks(r)
}

// checkAPIServer asks the API server's /readyz, which every authenticated
// identity may read (ClusterRole system:public-info-viewer).
func (o *Operator) checkAPIServer(ctx context.Context) error {
	return o.clientset.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
}

func (s *servers) serve(addr string, h http.Handler, option string) (string, error) {
	return s.serveTLS(addr, h, nil, option)
}

// serveTLS serves h on addr, over TLS when cfg is not nil.
func (s *servers) serveTLS(addr string, h http.Handler, cfg *tls.Config, option string) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("runtime: listen on %s: %w; choose another %s, or \"0\" to disable it", addr, err, option)
	}
	bound := l.Addr().String()
	if cfg != nil {
		l = tls.NewListener(l, cfg)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: s.errorLog}
	s.http = append(s.http, srv)
	go func() { _ = srv.Serve(l) }()
	return bound, nil
}

func (s *servers) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range s.http {
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = srv.Close()
		}
	}
	s.cancel()
}
