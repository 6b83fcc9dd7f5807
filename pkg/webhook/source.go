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
	return nil, fmt.Errorf("webhook: no certificate source for mode %q in this build; give one with webhook.UseCertificates", s.mode)
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
