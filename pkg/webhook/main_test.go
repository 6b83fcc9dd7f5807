package webhook_test

import (
	"context"
	"crypto/tls"
	"net"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/util/cert"

	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/pkg/webhook/certs"
)

// The tests register webhooks and conversion on the Gizmo CRD, which
// affect every client of it: the CRD is this package's alone.
var env = testenv.New(testenv.Options{CRDDirs: []string{"testdata/crd"}})

func TestMain(m *testing.M) { env.Main(m) }

// staticSource serves one self-signed certificate for 127.0.0.1, made
// with client-go's certificate library; it is ready once Run started.
type staticSource struct {
	cert   tls.Certificate
	bundle []byte
	ready  atomic.Bool
}

var _ certs.Source = (*staticSource)(nil)

func newStaticSource(t *testing.T) *staticSource {
	t.Helper()
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &staticSource{cert: pair, bundle: certPEM}
}

func (s *staticSource) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return &s.cert, nil
}
func (s *staticSource) Ready() bool      { return s.ready.Load() }
func (s *staticSource) CABundle() []byte { return s.bundle }
func (s *staticSource) Run(ctx context.Context) error {
	s.ready.Store(true)
	<-ctx.Done()
	return nil
}
