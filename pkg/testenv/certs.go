package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// credentials is the key material of one environment: a CA, the apiserver's
// serving certificate, the admin client certificate and the service-account
// token signing key. All of it is generated per environment and lives only in
// its temporary directory.
type credentials struct {
	caPEM          []byte
	adminCertPEM   []byte
	adminKeyPEM    []byte
	caFile         string
	servingCert    string
	servingKey     string
	saSigningKey   string
	saVerifyingKey string
}

// adminUser is the identity of Environment.Config. It is in system:masters,
// which the apiserver authorizes for everything without RBAC rules.
const adminUser = "opgen-admin"

func newCredentials(dir string) (*credentials, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now().Add(-time.Hour)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "opgen-testenv-ca"},
		NotBefore:             now,
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	c := &credentials{caPEM: pemBlock("CERTIFICATE", caDER)}

	servingCert, servingKey, err := issue(ca, caKey, &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now,
		NotAfter:     caTmpl.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
	})
	if err != nil {
		return nil, err
	}
	c.adminCertPEM, c.adminKeyPEM, err = issue(ca, caKey, &x509.Certificate{
		SerialNumber: big.NewInt(3),
		Subject:      pkix.Name{CommonName: adminUser, Organization: []string{"system:masters"}},
		NotBefore:    now,
		NotAfter:     caTmpl.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	saPriv, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		return nil, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}

	c.caFile = filepath.Join(dir, "ca.crt")
	c.servingCert = filepath.Join(dir, "apiserver.crt")
	c.servingKey = filepath.Join(dir, "apiserver.key")
	c.saSigningKey = filepath.Join(dir, "sa.key")
	c.saVerifyingKey = filepath.Join(dir, "sa.pub")
	files := map[string][]byte{
		c.caFile:         c.caPEM,
		c.servingCert:    servingCert,
		c.servingKey:     servingKey,
		c.saSigningKey:   pemBlock("EC PRIVATE KEY", saPriv),
		c.saVerifyingKey: pemBlock("PUBLIC KEY", saPub),
	}
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// issue signs tmpl with the CA and returns the certificate and its new key.
func issue(ca *x509.Certificate, caKey *ecdsa.PrivateKey, tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("sign %s: %w", tmpl.Subject.CommonName, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), pemBlock("EC PRIVATE KEY", keyDER), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
