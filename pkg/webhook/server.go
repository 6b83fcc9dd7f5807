package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/webhook/certs"
)

// server is an operator's webhook server: one HTTPS listener for every
// admission webhook and the conversion webhook. It holds what it needs of
// the operator, never the operator itself, so that servers (kept by
// operator in a weak map) go away with their operator.
type server struct {
	operator  string // Options.Name: the field manager and the names of the configurations
	opts      runtime.WebhookOptions
	log       logr.Logger
	client    kubernetes.Interface
	dynamic   dynamic.Interface
	metrics   *serverMetrics
	tracer    trace.Tracer
	namespace string // the Pod's namespace in cluster mode

	mu          sync.Mutex
	started     bool
	mux         *http.ServeMux
	hooks       []Hook
	conversions *converter
	source      certs.Source
	mode        string // resolved Mode
	addr        atomic.Pointer[string]
	registered  atomic.Bool // local mode: the configurations are applied
	checks      registrationCheck
	recheck     time.Duration // localRecheck when the server was made
}

var (
	serversMu sync.Mutex
	servers   = map[weak.Pointer[runtime.Operator]]*server{}
)

// serverFor returns op's webhook server, creating it and adding it to
// op's servers (every replica) and readiness on first use.
func serverFor(op *runtime.Operator) (*server, error) {
	if op == nil {
		return nil, errors.New("webhook: the Operator is nil")
	}
	key := weak.Make(op)
	serversMu.Lock()
	defer serversMu.Unlock()
	if s, ok := servers[key]; ok {
		return s, nil
	}
	s := newServer(op)
	// Disabled (Addr "0"), the server still runs: it checks that no
	// configuration of the operator calls the webhooks it does not serve.
	if err := op.AddReplicaRunnable(s); err != nil {
		return nil, fmt.Errorf("webhook: register webhooks before Operator.Run: %w", err)
	}
	if err := op.AddReadyCheck("webhook", s.readyCheck); err != nil {
		return nil, err
	}
	servers[key] = s
	cleanupKey := key
	// The map holds no strong reference to op: drop its server with it.
	_ = addCleanup(op, cleanupKey)
	return s, nil
}

func newServer(op *runtime.Operator) *server {
	o := op.Options()
	s := &server{
		operator:  o.Name,
		opts:      o.Webhook,
		log:       op.Logger().WithName("webhook"),
		client:    op.Clientset(),
		dynamic:   op.Dynamic(),
		metrics:   newServerMetrics(op.Registry()),
		namespace: podNamespace(),
		mux:       http.NewServeMux(),
		recheck:   localRecheck,
	}
	if o.TracerProvider != nil {
		s.tracer = o.TracerProvider.Tracer(tracerName)
	}
	return s
}

// handle serves h at path; it fails once the operator runs.
func (s *server) handle(path string, h http.Handler) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return fmt.Errorf("webhook: %s: the operator already runs; register every webhook before Operator.Run", path)
	}
	s.mux.Handle(path, h)
	return nil
}

// addHook serves an admission webhook; two registrations of one hook
// are an error.
func (s *server) addHook(h Hook, handler http.Handler) error {
	s.mu.Lock()
	for _, old := range s.hooks {
		if old.Path() == h.Path() {
			s.mu.Unlock()
			return fmt.Errorf("webhook: the %s webhook of %s is registered twice", h.Type, h.GVK)
		}
	}
	s.mu.Unlock()
	if err := s.handle(h.Path(), handler); err != nil {
		return err
	}
	s.mu.Lock()
	s.hooks = append(s.hooks, h)
	s.mu.Unlock()
	return nil
}

// Run serves the webhooks until ctx ends: it picks the certificate
// Source by mode, runs it, listens, and in local mode registers the
// configurations with the API server once the certificate is ready.
// Throughout, it checks that the configurations call only webhooks it
// serves (stale.go). Disabled (Addr "0"), it only checks.
func (s *server) Run(ctx context.Context) error {
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	s.resolveMode()
	if s.opts.Addr == "0" {
		s.log.Info("not serving the webhooks (--webhook-bind-address=0): writes their configurations guard are refused while those exist", "mode", s.mode, "paths", s.paths())
		s.watchRegistrations(ctx)
		return nil
	}
	src, err := s.certificateSource()
	if err != nil {
		return err
	}
	s.metrics.certExpiry.serve(src)
	addr := s.opts.Addr
	if s.mode == runtime.WebhookModeLocal && strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr // the certificate is made for 127.0.0.1
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("webhook: listen on %s: %w; choose another Options.Webhook.Addr (--webhook-bind-address), or \"0\" to disable the webhooks", addr, err)
	}
	bound := l.Addr().String()
	s.addr.Store(&bound)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	srcErr := make(chan error, 1)
	wg.Go(func() { srcErr <- src.Run(ctx) })
	srv := &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          serverErrorLog(s.log),
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: src.GetCertificate, NextProtos: []string{"h2", "http/1.1"}},
	}
	serveErr := make(chan error, 1)
	wg.Go(func() { serveErr <- srv.ServeTLS(l, "", "") })
	s.log.Info("serving webhooks", "address", "https://"+bound, "mode", s.mode, "paths", s.paths())
	if s.mode == runtime.WebhookModeLocal {
		wg.Go(func() { s.registerLocally(ctx, src, bound) })
	}
	wg.Go(func() { s.watchRegistrations(ctx) })
	select {
	case <-ctx.Done():
	case err = <-serveErr:
		err = fmt.Errorf("webhook: serve on %s: %w", bound, err)
	case err = <-srcErr:
		if err != nil {
			err = fmt.Errorf("webhook: certificate: %w", err)
		}
	}
	cancel()
	shutdown, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	if serr := srv.Shutdown(shutdown); serr != nil {
		_ = srv.Close()
	}
	if ctx.Err() != nil && err == nil {
		return nil
	}
	return err
}

// readyCheck gates the operator's readiness on a certificate (and, in
// local mode, on the configurations being registered): a replica without
// one would fail every call the Service sends it. It also waits for the
// check of stale configurations and fails while one is found (stale.go).
func (s *server) readyCheck(*http.Request) error { return s.readiness(true) }

// readiness is readyCheck's answer; with degraded, a check that cannot
// tell says so as runtime.Degraded.
func (s *server) readiness(degraded bool) error {
	if s.opts.Addr == "0" {
		return s.checks.ready(degraded)
	}
	s.mu.Lock()
	src := s.source
	s.mu.Unlock()
	switch {
	case src == nil || s.addr.Load() == nil:
		return errors.New("the webhook server is not listening yet")
	case !src.Ready():
		return errors.New("the webhook server has no certificate yet")
	case s.mode == runtime.WebhookModeLocal && !s.registered.Load():
		return errors.New("the webhook configurations are not registered with the API server yet")
	}
	return s.checks.ready(degraded)
}

func (s *server) paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, h := range s.hooks {
		out = append(out, h.Path())
	}
	if s.conversions != nil {
		out = append(out, ConvertPath)
	}
	return out
}

// Addr returns the address op's webhook server listens on once it runs
// (host:port), or "" before, without webhooks, or when disabled.
func Addr(op *runtime.Operator) string {
	serversMu.Lock()
	s, ok := servers[weak.Make(op)]
	serversMu.Unlock()
	if !ok {
		return ""
	}
	if a := s.addr.Load(); a != nil {
		return *a
	}
	return ""
}

// podNamespace is the operator's own namespace in a cluster.
func podNamespace() string {
	if ns := os.Getenv(runtime.EnvPodNamespace); ns != "" {
		return ns
	}
	if data, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
		return strings.TrimSpace(string(data))
	}
	return ""
}

// serverErrorLog sends what net/http logs (failed TLS handshakes) to the
// logger at V(1).
func serverErrorLog(l logr.Logger) *log.Logger {
	return slog.NewLogLogger(logr.ToSlogHandler(l.WithName("http")), slog.Level(-1))
}

// Ready returns nil when op's webhook server serves: it listens, has a
// certificate and, in local mode, has registered the configurations with
// the API server; and no configuration of op calls a webhook it does not
// serve (in local mode: none is left, the stale ones removed). An
// operator without webhooks is ready; one that serves none (disabled) is
// once its configurations are checked. It is the check /readyz runs;
// tests that start an operator wait for it before they write objects its
// webhooks guard.
func Ready(op *runtime.Operator) error {
	serversMu.Lock()
	s, ok := servers[weak.Make(op)]
	serversMu.Unlock()
	if !ok {
		return nil
	}
	return s.readiness(false)
}
