package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// The files FromDir reads, as cert-manager and kubernetes.io/tls Secrets
// name them.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
	CAFile   = "ca.crt"
)

// dir serves the certificate in a directory of mounted files, reloaded
// when they change (a Secret volume is updated in place when cert-manager
// renews the certificate).
type dir struct {
	path  string
	files *dynamiccertificates.DynamicCertKeyPairContent
	ca    *dynamiccertificates.DynamicFileCAContent // nil without ca.crt

	mu              sync.Mutex
	certPEM, keyPEM []byte
	pair            *tls.Certificate
}

// FromDir returns the Source of the certificate in path: tls.crt and
// tls.key, and ca.crt when present as the CA bundle (cert-manager writes
// it; the CA injector then keeps caBundle current, so the runtime does not
// need it). The files are read now, so that a missing or broken file is an
// error at start, and again whenever they change while Run runs.
func FromDir(path string) (Source, error) {
	files, err := dynamiccertificates.NewDynamicServingContentFromFiles("webhook-serving-cert",
		filepath.Join(path, CertFile), filepath.Join(path, KeyFile))
	if err != nil {
		return nil, fmt.Errorf("webhook certificate directory %s (--webhook-cert-dir): %w; it must hold %s and %s, as a kubernetes.io/tls Secret mounted there does", path, err, CertFile, KeyFile)
	}
	d := &dir{path: path, files: files}
	if _, err := d.GetCertificate(nil); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(path, CAFile)); err == nil {
		if d.ca, err = dynamiccertificates.NewDynamicCAContentFromFile("webhook-ca", filepath.Join(path, CAFile)); err != nil {
			return nil, fmt.Errorf("webhook certificate directory %s: %s: %w", path, CAFile, err)
		}
	}
	return d, nil
}

// GetCertificate parses the files' current content when it changed since
// the last handshake.
func (d *dir) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	certPEM, keyPEM := d.files.CurrentCertKeyContent()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pair != nil && bytes.Equal(certPEM, d.certPEM) && bytes.Equal(keyPEM, d.keyPEM) {
		return d.pair, nil
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("webhook certificate in %s: %w", d.path, err)
	}
	d.certPEM, d.keyPEM, d.pair = certPEM, keyPEM, &pair
	return d.pair, nil
}

// Ready is true: FromDir loaded the certificate.
func (d *dir) Ready() bool { return true }

// CABundle is ca.crt's current content, or nil without one.
func (d *dir) CABundle() []byte {
	if d.ca == nil {
		return nil
	}
	return d.ca.CurrentCABundleContent()
}

// Run watches the files until ctx ends.
func (d *dir) Run(ctx context.Context) error {
	go d.files.Run(ctx, 1)
	if d.ca != nil {
		go d.ca.Run(ctx, 1)
	}
	<-ctx.Done()
	return nil
}
