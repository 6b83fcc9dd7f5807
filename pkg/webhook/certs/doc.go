// Package certs gives the webhook server its serving certificate and keeps
// the API server's trust in it current: a Source serves the certificate to
// TLS handshakes and, while it runs, rotates it and writes the CA bundle
// where the API server reads it (the webhook configurations' and the CRDs'
// caBundle). Three sources cover the three places an operator runs: a
// directory of mounted files (cert-manager or a Secret volume), a CA and
// certificate the runtime manages in a Secret in a cluster, and a
// certificate for 127.0.0.1 made in memory for local development and
// tests.
//
// The package is stable: an incompatible change of its API comes with a
// line in CHANGELOG.md that says how to migrate, and, where it can,
// after a release of deprecation.
package certs

import (
	"context"
	"crypto/tls"
)

// Source serves the webhook server's certificate.
type Source interface {
	// GetCertificate is tls.Config.GetCertificate: the current serving
	// certificate, or an error while there is none yet.
	GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error)
	// Ready reports whether a certificate is loaded; the operator's
	// readiness waits for it.
	Ready() bool
	// CABundle is the PEM CA bundle that verifies the certificate, which
	// the API server is given as caBundle; nil when it is not known (a
	// mounted directory without ca.crt).
	CABundle() []byte
	// Run loads the certificate and keeps it and the CA bundle current
	// until ctx ends.
	Run(ctx context.Context) error
}
