// Package pki makes and parses certificates: CAs, serving and client
// certificates, with P-256 keys. The webhook server's managed certificates
// and the test environment's control plane use it.
package pki

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

// KeyPair is a certificate with its key, parsed and as PEM.
type KeyPair struct {
	Cert    *x509.Certificate
	Key     crypto.Signer
	CertPEM []byte
	KeyPEM  []byte
}

// New makes a P-256 key (client-go's keyutil) and a certificate for it
// from template, signed by parent (self-signed when nil). It is valid
// from a little before now, for clock skew between the signer and its
// peers, for life, and never beyond its CA.
func New(template *x509.Certificate, parent *KeyPair, now time.Time, life time.Duration) (*KeyPair, error) {
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
		signerCert, signerKey = parent.Cert, parent.Key
		if template.NotAfter.After(parent.Cert.NotAfter) {
			template.NotAfter = parent.Cert.NotAfter
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
	return &KeyPair{Cert: c, Key: key, CertPEM: certPEM, KeyPEM: keyPEM}, nil
}

// NewCA makes a CA named name.
func NewCA(name string, now time.Time, life time.Duration) (*KeyPair, error) {
	return New(&x509.Certificate{
		Subject:               pkix.Name{CommonName: fmt.Sprintf("%s-ca@%d", name, now.Unix())},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil, now, life)
}

// NewServing makes a serving certificate for hosts and ips signed by ca.
func NewServing(ca *KeyPair, hosts []string, ips []net.IP, now time.Time, life time.Duration) (*KeyPair, error) {
	cn := "webhook"
	if len(hosts) > 0 {
		cn = hosts[0]
	}
	return New(&x509.Certificate{
		Subject:               pkix.Name{CommonName: cn},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              hosts,
		IPAddresses:           ips,
	}, ca, now, life)
}

// NewClient makes a client certificate for user in groups, signed by ca.
func NewClient(ca *KeyPair, user string, groups []string, now time.Time, life time.Duration) (*KeyPair, error) {
	return New(&x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, now, life)
}

// Parse parses a certificate and key in PEM; nil, nil when both are empty.
func Parse(certPEM, keyPEM []byte) (*KeyPair, error) {
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
	return &KeyPair{Cert: certs[0], Key: key, CertPEM: certPEM, KeyPEM: keyPEM}, nil
}

// RenewAt is when c should be replaced: two thirds into its life.
func RenewAt(c *x509.Certificate) time.Time {
	return c.NotBefore.Add(c.NotAfter.Sub(c.NotBefore) * 2 / 3)
}

// SignedBy reports whether ca signed c.
func SignedBy(c, ca *x509.Certificate) bool {
	return c.CheckSignatureFrom(ca) == nil
}

// Names reports whether c is made for exactly hosts and ips.
func Names(c *x509.Certificate, hosts []string, ips []net.IP) bool {
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

// Bundle is the PEM of certs, in order.
func Bundle(certs []*x509.Certificate) []byte {
	var out bytes.Buffer
	for _, c := range certs {
		b, _ := cert.EncodeCertificates(c) // encoding a parsed certificate cannot fail
		out.Write(b)
	}
	return out.Bytes()
}
