package webhook

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync/atomic"

	"k8s.io/client-go/util/cert"

	"github.com/opgen-sdk/opgen/pkg/webhook/certs"
)

// selfSigned serves a certificate for 127.0.0.1, ::1 and localhost signed
// by a CA made with it (client-go's GenerateSelfSignedCertKey), made in
// memory when Run starts and valid for a year: the local mode's
// certificate for the life of one process, whose CA bundle the operator
// registers itself.
type selfSigned struct {
	cert   atomic.Pointer[tls.Certificate]
	bundle atomic.Pointer[[]byte]
}

var _ certs.Source = (*selfSigned)(nil)

func (s *selfSigned) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c := s.cert.Load()
	if c == nil {
		return nil, fmt.Errorf("webhook: no certificate yet")
	}
	return c, nil
}

func (s *selfSigned) Ready() bool { return s.cert.Load() != nil }

func (s *selfSigned) CABundle() []byte {
	if b := s.bundle.Load(); b != nil {
		return *b
	}
	return nil
}

func (s *selfSigned) Run(ctx context.Context) error {
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, []string{"localhost"})
	if err != nil {
		return fmt.Errorf("make a certificate for 127.0.0.1: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return err
	}
	s.bundle.Store(&certPEM)
	s.cert.Store(&pair)
	<-ctx.Done()
	return nil
}
