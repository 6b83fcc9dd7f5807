package webhook_test

import (
	"crypto/x509"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/opgen-sdk/opgen/test/testkit"
)

// TestCertificateExpiryIsExported: the operator's registry reports when
// the serving certificate expires, the series an alert on expiry reads.
func TestCertificateExpiryIsExported(t *testing.T) {
	name := "expiry-" + rand.String(5)
	cleanupRegistration(t, name)
	src := newStaticSource(t)
	op, _ := runningOperator(t, name, src)
	leaf, err := x509.ParseCertificate(src.cert.Certificate[0])
	require.NoError(t, err)
	got := testkit.Metric(t, op, "opgen_webhook_certificate_expiration_timestamp_seconds")
	assert.Equal(t, float64(leaf.NotAfter.Unix()), got)
}
