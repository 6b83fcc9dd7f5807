package webhook

import (
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"weak"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/webhook/certs"
)

// UseCertificates makes op's webhook server serve src's certificate in
// place of the one Options.Webhook chooses (a Secret the runtime manages
// in a cluster, mounted files with CertDir, an in-memory certificate for
// 127.0.0.1 locally). The server runs src. Call it before Operator.Run.
func UseCertificates(op *runtime.Operator, src certs.Source) error {
	if src == nil {
		return errors.New("webhook.UseCertificates: the Source is nil")
	}
	s, err := serverFor(op)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("webhook.UseCertificates: the operator already runs; call it before Operator.Run")
	}
	s.source = src
	return nil
}

// resolveMode sets s.mode from the options: auto is cluster in a Pod,
// local outside.
func (s *server) resolveMode() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode = s.opts.Mode
	if s.mode == runtime.WebhookModeAuto || s.mode == "" {
		s.mode = runtime.WebhookModeLocal
		if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
			s.mode = runtime.WebhookModeCluster
		}
	}
}

// certificateSource returns the Source the server serves: the one given
// to UseCertificates, else the one of the mode (resolveMode first).
func (s *server) certificateSource() (certs.Source, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.source != nil {
		return s.source, nil
	}
	src, err := modeSource(s)
	if err != nil {
		return nil, err
	}
	s.source = src
	return src, nil
}

// modeSource is the certificate Source of s's mode and options.
func modeSource(s *server) (certs.Source, error) {
	if s.opts.CertDir != "" {
		return certs.FromDir(s.opts.CertDir)
	}
	if s.mode == runtime.WebhookModeLocal {
		return &selfSigned{}, nil
	}
	return s.managedSource()
}

// managedSource is the cluster mode's certificate without --webhook-cert-dir:
// a CA and serving certificate the runtime keeps in the Secret
// <operator>-webhook-cert of its namespace, for the webhook Service, whose
// bundle it keeps in the configurations and converted CRDs (the RBAC
// opgen manifests writes allows exactly that).
func (s *server) managedSource() (certs.Source, error) {
	if s.namespace == "" {
		return nil, fmt.Errorf("webhook: in %s mode the runtime keeps the webhook certificate in a Secret of the operator's namespace, which is not known: set %s (the manifest opgen writes sets it from the Pod's namespace), or pass --webhook-cert-dir", s.mode, runtime.EnvPodNamespace)
	}
	var validating, mutating []string
	for _, h := range s.hooks {
		switch h.Type {
		case Validating:
			validating = []string{ValidatingConfigurationName(s.operator)}
		case Mutating:
			mutating = []string{MutatingConfigurationName(s.operator)}
		}
	}
	var crds []string
	if s.conversions != nil {
		crds = s.conversions.crds()
	}
	return certs.Managed(certs.ManagedOptions{
		Client:                   s.client,
		Dynamic:                  s.dynamic,
		Namespace:                s.namespace,
		SecretName:               SecretName(s.operator),
		Service:                  ServiceName(s.operator),
		ValidatingConfigurations: validating,
		MutatingConfigurations:   mutating,
		CRDs:                     crds,
		FieldManager:             s.operator,
		Log:                      s.log.WithName("certs"),
	})
}

// addCleanup deletes op's server from the servers map once op is
// collected.
func addCleanup(op *runtime.Operator, key weak.Pointer[runtime.Operator]) goruntime.Cleanup {
	return goruntime.AddCleanup(op, func(k weak.Pointer[runtime.Operator]) {
		serversMu.Lock()
		delete(servers, k)
		serversMu.Unlock()
	}, key)
}
