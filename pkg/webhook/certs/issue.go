package certs

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net"
	"slices"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// keyPair is a certificate with its key, parsed and as PEM.
type keyPair struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
	keyPEM  []byte
}

// newKeyPair makes a P-256 key (client-go's keyutil) and a certificate
// for it from template, signed by parent (self-signed when nil), valid
// from a little before now (clock skew between the operator and the API
// server) for life.
func newKeyPair(template *x509.Certificate, parent *keyPair, now time.Time, life time.Duration) (*keyPair, error) {
	keyPEM, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return nil, err
	}
	parsed, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, err
	}
	key, ok := parsed.(crypto.Signer)
	if !ok {
		return nil, errors.New("the generated key is not a crypto.Signer")
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(math.MaxInt64))
	if err != nil {
		return nil, err
	}
	template.SerialNumber = serial.Add(serial, big.NewInt(1))
	template.NotBefore = now.Add(-min(time.Minute, life/10)).UTC()
	template.NotAfter = now.Add(life).UTC()
	signerCert, signerKey := template, key
	if parent != nil {
		signerCert, signerKey = parent.cert, parent.key
		if template.NotAfter.After(parent.cert.NotAfter) {
			template.NotAfter = parent.cert.NotAfter // never outlives its CA
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, template, signerCert, key.Public(), signerKey)
	if err != nil {
		return nil, err
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	certPEM, err := cert.EncodeCertificates(c)
	if err != nil {
		return nil, err
	}
	return &keyPair{cert: c, key: key, certPEM: certPEM, keyPEM: keyPEM}, nil
}

// newCA makes a CA named name.
func newCA(name string, now time.Time, life time.Duration) (*keyPair, error) {
	return newKeyPair(&x509.Certificate{
		Subject:               pkix.Name{CommonName: fmt.Sprintf("%s-ca@%d", name, now.Unix())},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil, now, life)
}

// newServing makes a serving certificate for hosts and ips signed by ca.
func newServing(ca *keyPair, hosts []string, ips []net.IP, now time.Time, life time.Duration) (*keyPair, error) {
	cn := "webhook"
	if len(hosts) > 0 {
		cn = hosts[0]
	}
	return newKeyPair(&x509.Certificate{
		Subject:               pkix.Name{CommonName: cn},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              hosts,
		IPAddresses:           ips,
	}, ca, now, life)
}

// parseKeyPair parses a certificate and key in PEM; nil, nil when both are
// empty.
func parseKeyPair(certPEM, keyPEM []byte) (*keyPair, error) {
	if len(certPEM) == 0 && len(keyPEM) == 0 {
		return nil, nil
	}
	certs, err := cert.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, err
	}
	parsed, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, err
	}
	key, ok := parsed.(crypto.Signer)
	if !ok {
		return nil, errors.New("the key is not a signing key")
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return nil, err // the key does not match the certificate
	}
	return &keyPair{cert: certs[0], key: key, certPEM: certPEM, keyPEM: keyPEM}, nil
}

// renewAt is when c should be replaced: two thirds into its life.
func renewAt(c *x509.Certificate) time.Time {
	return c.NotBefore.Add(c.NotAfter.Sub(c.NotBefore) * 2 / 3)
}

// signedBy reports whether ca signed c.
func signedBy(c, ca *x509.Certificate) bool {
	return c.CheckSignatureFrom(ca) == nil
}

// names reports whether c is made for exactly hosts and ips.
func names(c *x509.Certificate, hosts []string, ips []net.IP) bool {
	if !slices.Equal(c.DNSNames, hosts) || len(c.IPAddresses) != len(ips) {
		return false
	}
	for i, ip := range ips {
		if !c.IPAddresses[i].Equal(ip) {
			return false
		}
	}
	return true
}

// encodeBundle is the PEM of certs, in order.
func encodeBundle(certs []*x509.Certificate) []byte {
	var out bytes.Buffer
	for _, c := range certs {
		b, _ := cert.EncodeCertificates(c) // encoding a parsed certificate cannot fail
		out.Write(b)
	}
	return out.Bytes()
}
