package certs_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/cert"

	"github.com/opgen-sdk/opgen/pkg/webhook/certs"
)

func writePair(t *testing.T, dir, host string) []byte {
	t.Helper()
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(host, []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	require.NoError(t, err)
	// Write beside, then rename: as a Secret volume's atomic update does.
	for name, b := range map[string][]byte{certs.CertFile: certPEM, certs.KeyFile: keyPEM, certs.CAFile: certPEM} {
		tmp := filepath.Join(dir, "."+name)
		require.NoError(t, os.WriteFile(tmp, b, 0o600))
		require.NoError(t, os.Rename(tmp, filepath.Join(dir, name)))
	}
	return certPEM
}

func subject(t *testing.T, c *tls.Certificate) string {
	t.Helper()
	x, err := x509.ParseCertificate(c.Certificate[0])
	require.NoError(t, err)
	return x.Subject.CommonName
}

// TestFromDir: the certificate in the directory is served, and a renewed
// one replaces it while the Source runs, CA bundle included.
func TestFromDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := writePair(t, dir, "first")
	src, err := certs.FromDir(dir)
	require.NoError(t, err)
	assert.True(t, src.Ready())
	c, err := src.GetCertificate(nil)
	require.NoError(t, err)
	assert.Equal(t, "first@", subject(t, c)[:6])
	assert.Equal(t, first, src.CABundle())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = src.Run(ctx) }()
	second := writePair(t, dir, "second")
	t.Log("waiting up to 30s for the renewed files to be served (the file watch, or its one-minute resync)")
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		c, err := src.GetCertificate(nil)
		return err == nil && subject(t, c)[:7] == "second@" && string(src.CABundle()) == string(second), nil
	})
	require.NoError(t, err, "the renewed certificate was not served")
}

// TestFromDirMissing: a directory without the files is an error that
// names them.
func TestFromDirMissing(t *testing.T) {
	t.Parallel()
	_, err := certs.FromDir(t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tls.crt and tls.key")
}
