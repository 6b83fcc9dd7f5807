package serving

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/go-logr/logr"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/observe"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/securemetrics"
)

// Config says what Start serves, and where. An address "0" disables its
// endpoint; with MetricsInsecure, equal metrics and health addresses share
// one listener.
type Config struct {
	MetricsAddr, HealthAddr, PprofAddr string
	MetricsInsecure                    bool
	MetricsCertDir                     string
	// Metrics serves /metrics; the API server behind RESTConfig and
	// HTTPClient authorizes its callers (over HTTPS, unless
	// MetricsInsecure).
	Metrics    http.Handler
	RESTConfig *rest.Config
	HTTPClient *http.Client
	// Health and Ready answer /healthz and /readyz: nil, or the error
	// that fails them; the notes are shown either way.
	Health, Ready func(*http.Request) (notes []string, err error)
	Log           logr.Logger
}

// Servers are the endpoints Start listens on.
type Servers struct {
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

// Start listens on the configured addresses and serves. On an error, the
// Servers returned are the ones started: Stop them.
func Start(cfg Config) (*Servers, error) {
	s := &Servers{errorLog: serverErrorLog(cfg.Log)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	health := http.NewServeMux()
	health.HandleFunc("/healthz", answer(cfg.Health, http.StatusInternalServerError))
	health.HandleFunc("/readyz", answer(cfg.Ready, http.StatusServiceUnavailable))
	if err := s.startPprof(cfg); err != nil {
		return s, err
	}
	if cfg.MetricsInsecure && cfg.MetricsAddr == cfg.HealthAddr && cfg.MetricsAddr != "0" {
		health.Handle("/metrics", cfg.Metrics)
		addr, err := s.serve(cfg.HealthAddr, health, "Options.HealthAddr and Options.MetricsAddr")
		s.metricsAddr, s.healthAddr = addr, addr
		return s, err
	}
	if cfg.MetricsAddr != "0" {
		if err := s.startMetrics(cfg); err != nil {
			return s, err
		}
	}
	var err error
	if cfg.HealthAddr != "0" {
		s.healthAddr, err = s.serve(cfg.HealthAddr, health, "Options.HealthAddr (--health-probe-bind-address)")
	}
	return s, err
}

// answer serves a check: "ok" and its notes, or the failure with code.
func answer(check func(*http.Request) ([]string, error), code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		notes, err := check(r)
		if err != nil {
			http.Error(w, err.Error(), code)
			return
		}
		fmt.Fprintln(w, "ok")
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
}

// startMetrics serves /metrics on its own address: over HTTPS to
// authenticated and authorized requests, or over HTTP to anyone with
// MetricsInsecure.
func (s *Servers) startMetrics(cfg Config) error {
	const option = "Options.MetricsAddr (--metrics-bind-address)"
	if !observe.RESTMetrics() {
		cfg.Log.Info("client-go's REST metrics were registered by another package: /metrics has no rest_client_* series")
	}
	mux := http.NewServeMux()
	var err error
	if cfg.MetricsInsecure {
		mux.Handle("/metrics", cfg.Metrics)
		s.metricsAddr, err = s.serve(cfg.MetricsAddr, mux, option)
		return err
	}
	authn, err := authenticationv1client.NewForConfigAndClient(cfg.RESTConfig, cfg.HTTPClient)
	if err != nil {
		return err
	}
	authz, err := authorizationv1client.NewForConfigAndClient(cfg.RESTConfig, cfg.HTTPClient)
	if err != nil {
		return err
	}
	auth := securemetrics.NewAuth(authn, authz, cfg.Log.WithName("metrics"))
	tlsCfg, err := securemetrics.TLS(s.ctx, cfg.MetricsCertDir)
	if err != nil {
		return err
	}
	mux.Handle("/metrics", auth.Wrap(cfg.Metrics))
	s.metricsSecure = true
	s.metricsAddr, err = s.serveTLS(cfg.MetricsAddr, mux, tlsCfg, option)
	return err
}

// startPprof serves net/http/pprof under /debug/pprof/ on PprofAddr when
// set.
func (s *Servers) startPprof(cfg Config) error {
	if cfg.PprofAddr == "" || cfg.PprofAddr == "0" {
		return nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	addr, err := s.serve(cfg.PprofAddr, mux, "Options.PprofAddr (--pprof-bind-address)")
	s.pprofAddr = addr
	if err == nil {
		cfg.Log.Info("serving net/http/pprof", "address", addr+"/debug/pprof/")
	}
	return err
}

// MetricsAddr, HealthAddr and PprofAddr are the bound addresses, or "".
func (s *Servers) MetricsAddr() string { return s.metricsAddr }

// HealthAddr is the address of /healthz and /readyz, or "".
func (s *Servers) HealthAddr() string { return s.healthAddr }

// PprofAddr is the address of net/http/pprof, or "".
func (s *Servers) PprofAddr() string { return s.pprofAddr }

// MetricsURL spells the metrics address as a URL, or "off".
func (s *Servers) MetricsURL() string {
	u := AddrOrOff(s.metricsAddr, "/metrics")
	if s.metricsSecure {
		u = strings.Replace(u, "http://", "https://", 1)
	}
	return u
}

// AddrOrOff spells a bound address as a URL of path, or "off". An
// address bound on every interface ([::]:40123) is spelled with
// localhost, so that it can be pasted into a browser or curl.
func AddrOrOff(addr, path string) string {
	if addr == "" {
		return "off"
	}
	if host, port, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			addr = net.JoinHostPort("localhost", port)
		}
	}
	return "http://" + addr + path
}

// serverErrorLog sends what net/http logs (a failed TLS handshake, a
// panicking handler) to the operator's logger at V(1), so that JSON logs
// stay JSON.
func serverErrorLog(l logr.Logger) *log.Logger {
	return slog.NewLogLogger(logr.ToSlogHandler(l.WithName("http")), slog.Level(-1))
}

func (s *Servers) serve(addr string, h http.Handler, option string) (string, error) {
	return s.serveTLS(addr, h, nil, option)
}

// serveTLS serves h on addr, over TLS when cfg is not nil.
func (s *Servers) serveTLS(addr string, h http.Handler, cfg *tls.Config, option string) (string, error) {
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

// Stop shuts the servers down, waiting up to 5s for their requests.
func (s *Servers) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range s.http {
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = srv.Close()
		}
	}
	s.cancel()
}
