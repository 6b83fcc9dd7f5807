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

// certificateSource resolves the mode and returns the Source the server
// serves: the one given to UseCertificates, else the one of the mode.
func (s *server) certificateSource() (certs.Source, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode = s.opts.Mode
	if s.mode == runtime.WebhookModeAuto || s.mode == "" {
		s.mode = runtime.WebhookModeLocal
		if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
			s.mode = runtime.WebhookModeCluster
		}
	}
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
	return nil, fmt.Errorf("webhook: in %s mode the webhook server needs a certificate: deploy with opgen manifests --cert-manager, which mounts cert-manager's certificate and passes --webhook-cert-dir, or mount a kubernetes.io/tls Secret and pass its directory with --webhook-cert-dir, or give a certs.Source with webhook.UseCertificates (a certificate the runtime makes and rotates in a Secret itself is not built yet)", s.mode)
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
