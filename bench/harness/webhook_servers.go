package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	loadv1 "github.com/opgen-sdk/opgen/bench/apis/load/v1"
	todov1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
	todov1alpha1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1alpha1"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/webhook"
	"github.com/opgen-sdk/opgen/pkg/webhook/certs"
)

// staticCert serves one certificate.
type staticCert struct{ pair tls.Certificate }

func (c *staticCert) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return &c.pair, nil
}
func (c *staticCert) Ready() bool                   { return true }
func (c *staticCert) CABundle() []byte              { return nil }
func (c *staticCert) Run(ctx context.Context) error { <-ctx.Done(); return nil }

var _ certs.Source = (*staticCert)(nil)

var loadKind = runtime.Kind[*loadv1.Load]{GVK: loadv1.SchemeGroupVersion.WithKind("Load"), Resource: "loads", Namespaced: true}

// startOpgenWebhooks runs an Operator with no controllers whose webhook
// server serves the benchmark's webhooks (cluster mode: nothing is
// registered with the API server).
func startOpgenWebhooks(ctx context.Context, kubeconfig, _ string, certPEM, keyPEM []byte, scheme *k8sruntime.Scheme) (*webhookServer, error) {
	cfg, err := runtime.LoadConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	op, err := runtime.New(cfg, runtime.Options{
		Name:           "bench-webhooks",
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true},
		MetricsAddr:    "0",
		Logger:         logr.FromSlogHandler(slog.DiscardHandler),
		Webhook:        runtime.WebhookOptions{Mode: runtime.WebhookModeCluster, Addr: "127.0.0.1:0"},
	})
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	if err := errors.Join(
		webhook.Validate(op, loadKind, loadWebhook{}),
		webhook.Default(op, loadKind, loadWebhook{}),
		webhook.Convert(op, scheme, todov1.SchemeGroupVersion.WithKind("Todo"), "todos"),
		webhook.UseCertificates(op, &staticCert{pair: pair}),
	); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- op.Run(runCtx) }()
	if err := waitListening(func() bool { return webhook.Addr(op) != "" }, done, cancel, "the opgen operator", "opgen's webhook server"); err != nil {
		return nil, err
	}
	paths := map[string]string{"/validate": webhook.Hook{Type: webhook.Validating, GVK: loadKind.GVK, Resource: "loads"}.Path(),
		"/mutate": webhook.Hook{Type: webhook.Mutating, GVK: loadKind.GVK, Resource: "loads"}.Path(), "/convert": webhook.ConvertPath}
	return &webhookServer{name: opgen, base: "https://" + webhook.Addr(op), paths: paths, stop: func() { cancel(); <-done }}, nil
}

// startCRWebhooks runs controller-runtime's webhook server with the same
// webhooks.
func startCRWebhooks(ctx context.Context, _, dir string, _, _ []byte, scheme *k8sruntime.Scheme) (*webhookServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	crlog.SetLogger(logr.Discard()) // as opgen's: no log on the measured path
	srv := crwebhook.NewServer(crwebhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir})
	srv.Register("/validate", admission.WithValidator[*loadv1.Load](scheme, crLoadWebhook{}))
	srv.Register("/mutate", admission.WithDefaulter[*loadv1.Load](scheme, loadWebhook{}))
	registry := conversion.NewRegistry()
	converter, err := conversion.NewHubSpokeConverter(&todov1.Todo{}, conversion.NewSpokeConverter(&todov1alpha1.Todo{},
		func(_ context.Context, hub *todov1.Todo, spoke *todov1alpha1.Todo) error {
			return todov1alpha1.Convert_v1_Todo_To_v1alpha1_Todo(hub, spoke, nil)
		},
		func(_ context.Context, spoke *todov1alpha1.Todo, hub *todov1.Todo) error {
			return todov1alpha1.Convert_v1alpha1_Todo_To_v1_Todo(spoke, hub, nil)
		}))(scheme)
	if err != nil {
		return nil, err
	}
	if err := registry.RegisterConverter(todov1.SchemeGroupVersion.WithKind("Todo").GroupKind(), converter); err != nil {
		return nil, err
	}
	srv.Register("/convert", conversion.NewWebhookHandler(scheme, registry))
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Start(runCtx) }()
	if err := waitListening(func() bool { return srv.StartedChecker()(nil) == nil }, done, cancel, "controller-runtime's webhook server", "controller-runtime's webhook server"); err != nil {
		return nil, err
	}
	return &webhookServer{name: cr, base: fmt.Sprintf("https://127.0.0.1:%d", port), stop: func() { cancel(); <-done }}, nil
}

// startBareWebhooks serves the floor: a net/http TLS server whose handlers
// decode the review and the object, check or convert, and answer.
func startBareWebhooks(_ context.Context, _, _ string, certPEM, keyPEM []byte, _ *k8sruntime.Scheme) (*webhookServer, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/validate", func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		var l loadv1.Load
		if err := json.Unmarshal(review.Request.Object.Raw, &l); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		if err := (loadWebhook{}).check(&l); err != nil {
			resp.Allowed, resp.Result = false, &metav1.Status{Message: err.Error()}
		}
		review.Request, review.Response = nil, resp
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	})
	mux.HandleFunc("/convert", func(w http.ResponseWriter, r *http.Request) {
		var review apiextensionsv1.ConversionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
		for _, o := range review.Request.Objects {
			var in todov1alpha1.Todo
			var out todov1.Todo
			if err := json.Unmarshal(o.Raw, &in); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if err := todov1alpha1.Convert_v1alpha1_Todo_To_v1_Todo(&in, &out, nil); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			out.TypeMeta = metav1.TypeMeta{APIVersion: review.Request.DesiredAPIVersion, Kind: "Todo"}
			raw, err := json.Marshal(&out)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			resp.ConvertedObjects = append(resp.ConvertedObjects, k8sruntime.RawExtension{Raw: raw})
		}
		review.Request, review.Response = nil, resp
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}}
	go func() { _ = srv.ServeTLS(l, "", "") }()
	return &webhookServer{name: bare, base: "https://" + l.Addr().String(), stop: func() { _ = srv.Close() }}, nil
}

// waitListening waits up to 60s for listening to report a server that
// accepts requests. When the server's run returns first (on done), or the
// time runs out, it cancels the run and says which: runner names what
// runs the server, server the server itself.
func waitListening(listening func() bool, done <-chan error, cancel context.CancelFunc, runner, server string) error {
	deadline := time.Now().Add(60 * time.Second)
	for !listening() {
		select {
		case err := <-done:
			cancel()
			return fmt.Errorf("%s stopped: %v", runner, err)
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			return fmt.Errorf("waited 60s in vain for %s to listen", server)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}
