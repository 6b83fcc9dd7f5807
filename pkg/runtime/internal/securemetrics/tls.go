package securemetrics

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	certutil "k8s.io/client-go/util/cert"
)

// TLS returns the TLS configuration of secure metrics. It serves the
// certificate in dir, reloaded when its files change until ctx ends, or a
// self-signed one when dir is "".
func TLS(ctx context.Context, dir string) (*tls.Config, error) {
	// HTTP/2 is off: a scrape needs none of it, and it closes the class of
	// HTTP/2 stream floods (Rapid Reset), as kubebuilder's scaffold does.
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	if dir != "" {
		files, err := dynamiccertificates.NewDynamicServingContentFromFiles("metrics-serving-cert",
			filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile))
		if err != nil {
			return nil, fmt.Errorf("runtime: Options.MetricsCertDir (--metrics-cert-dir) %s: %w; it must hold %s and %s", dir, err, CertFile, KeyFile)
		}
		go files.Run(ctx, 1)
		cfg.GetCertificate = (&reloadingCert{files: files}).get
		return cfg, nil
	}
	host, _ := os.Hostname()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("localhost", []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, []string{host})
	if err != nil {
		return nil, fmt.Errorf("runtime: secure metrics: make a self-signed certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("runtime: secure metrics: %w", err)
	}
	cfg.Certificates = []tls.Certificate{pair}
	return cfg, nil
}

// reloadingCert parses the certificate files' current content when it
// changed since the last handshake.
type reloadingCert struct {
	files *dynamiccertificates.DynamicCertKeyPairContent

	mu              sync.Mutex
	certPEM, keyPEM []byte
	pair            *tls.Certificate
}

func (c *reloadingCert) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	certPEM, keyPEM := c.files.CurrentCertKeyContent()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pair != nil && bytes.Equal(certPEM, c.certPEM) && bytes.Equal(keyPEM, c.keyPEM) {
		return c.pair, nil
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("runtime: the metrics certificate in --metrics-cert-dir: %w", err)
	}
	c.certPEM, c.keyPEM, c.pair = certPEM, keyPEM, &pair
	return c.pair, nil
}
