package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/opgen-sdk/opgen/internal/pki"
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

// credentialsLife is how long an environment's certificates hold: longer
// than any test run.
const credentialsLife = 10 * 365 * 24 * time.Hour

func newCredentials(dir string) (*credentials, error) {
	now := time.Now()
	ca, err := pki.NewCA("opgen-testenv", now, credentialsLife)
	if err != nil {
		return nil, err
	}
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)}
	hosts := []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	serving, err := pki.NewServing(ca, hosts, ips, now, credentialsLife)
	if err != nil {
		return nil, err
	}
	admin, err := pki.NewClient(ca, adminUser, []string{"system:masters"}, now, credentialsLife)
	if err != nil {
		return nil, err
	}
	saKey, saPub, err := signingKey()
	if err != nil {
		return nil, err
	}
	c := &credentials{
		caPEM: ca.CertPEM, adminCertPEM: admin.CertPEM, adminKeyPEM: admin.KeyPEM,
		caFile: filepath.Join(dir, "ca.crt"), servingCert: filepath.Join(dir, "apiserver.crt"), servingKey: filepath.Join(dir, "apiserver.key"),
		saSigningKey: filepath.Join(dir, "sa.key"), saVerifyingKey: filepath.Join(dir, "sa.pub"),
	}
	files := map[string][]byte{
		c.caFile: ca.CertPEM, c.servingCert: serving.CertPEM, c.servingKey: serving.KeyPEM,
		c.saSigningKey: saKey, c.saVerifyingKey: saPub,
	}
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// signingKey makes the service-account token signing key, private and
// public, as PEM.
func signingKey() (keyPEM, pubPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	priv, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("EC PRIVATE KEY", priv), pemBlock("PUBLIC KEY", pub), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
