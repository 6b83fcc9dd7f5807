package runtime

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// servers runs the metrics and health endpoints.
type servers struct {
	metricsAddr, healthAddr string // bound addresses, once listening
	http                    []*http.Server
}

// start listens on the configured addresses ("0" disables one) and serves
// /metrics, /healthz and /readyz. ready reports whether the caches synced.
func (o *Operator) startServers(ready func() bool) (*servers, error) {
	s := &servers{}
	health := http.NewServeMux()
	health.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	health.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready() {
			http.Error(w, "caches not synced yet", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	metricsHandler := promhttp.HandlerFor(o.metrics.registry, promhttp.HandlerOpts{Registry: o.metrics.registry})
	if o.opts.MetricsAddr == o.opts.HealthAddr && o.opts.MetricsAddr != "0" {
		health.Handle("/metrics", metricsHandler)
		addr, err := s.serve(o.opts.HealthAddr, health, "Options.HealthAddr and Options.MetricsAddr")
		s.metricsAddr, s.healthAddr = addr, addr
		return s, err
	}
	var err error
	if o.opts.MetricsAddr != "0" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", metricsHandler)
		if s.metricsAddr, err = s.serve(o.opts.MetricsAddr, mux, "Options.MetricsAddr (--metrics-bind-address)"); err != nil {
			return s, err
		}
	}
	if o.opts.HealthAddr != "0" {
		s.healthAddr, err = s.serve(o.opts.HealthAddr, health, "Options.HealthAddr (--health-probe-bind-address)")
	}
	return s, err
}

func (s *servers) serve(addr string, h http.Handler, option string) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("runtime: listen on %s: %w; choose another %s, or \"0\" to disable it", addr, err, option)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	s.http = append(s.http, srv)
	go func() { _ = srv.Serve(l) }()
	return l.Addr().String(), nil
}

func (s *servers) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range s.http {
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = srv.Close()
		}
	}
}
