package runtime_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"

	"github.com/opgen-sdk/opgen/pkg/manifest"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
)

// The operator runs and is scraped under the rules the generated manifest
// grants (pkg/manifest).
var (
	reviewRules        = manifest.MetricsAuthRules()
	metricsReaderRules = manifest.MetricsReaderRole("metrics-reader").Rules
)

// TestSecureMetrics: by default /metrics is HTTPS and the API server
// decides who reads it. The operator runs as a ServiceAccount with only
// the review rules; an unauthenticated scrape gets 401, a ServiceAccount
// without the metrics rule 403, one bound to the metrics reader role the
// metrics.
func TestSecureMetrics(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	ctx := context.Background()
	operatorCfg := testkit.ServiceAccount(t, env, ns, "operator", reviewRules)
	readerToken := testkit.ServiceAccount(t, env, ns, "scraper", metricsReaderRules).BearerToken
	strangerCfg, err := env.ServiceAccountConfig(ctx, ns, "stranger")
	require.NoError(t, err)

	h := newOperator(t, ns, operatorCfg, runtime.Options{MetricsAddr: "127.0.0.1:0", LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
	h.start()
	url := "https://" + h.op.MetricsAddr() + "/metrics"
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

	code, body := scrape(t, insecure, url, "")
	assert.Equal(t, http.StatusUnauthorized, code, "no token: %s", body)
	code, body = scrape(t, insecure, url, "not-a-token")
	assert.Equal(t, http.StatusUnauthorized, code, "a token the API server rejects: %s", body)
	code, body = scrape(t, insecure, url, strangerCfg.BearerToken)
	assert.Equal(t, http.StatusForbidden, code, "a ServiceAccount without the metrics rule: %s", body)
	assert.Contains(t, body, "nonResourceURLs [/metrics]", "the refusal says what to grant")

	waitAllowed(t, "system:serviceaccount:"+ns+":scraper")
	code, body = scrape(t, insecure, url, readerToken)
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "opgen_leader ")
	assert.Contains(t, body, "go_goroutines ")

	resp, err := http.Get("http://" + h.op.MetricsAddr() + "/metrics")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "plain HTTP to the HTTPS port")
}

// TestSecureMetricsCertDir: with Options.MetricsCertDir the metrics are
// served with that certificate, and with the new one once the files change.
func TestSecureMetricsCertDir(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	readerToken := testkit.ServiceAccount(t, env, ns, "scraper", metricsReaderRules).BearerToken
	dir := t.TempDir()
	first := writeCert(t, dir, "metrics-first.example")

	h := newOperator(t, ns, nil, runtime.Options{MetricsAddr: "127.0.0.1:0", MetricsCertDir: dir, LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
	h.start()
	url := "https://" + h.op.MetricsAddr() + "/metrics"
	waitAllowed(t, "system:serviceaccount:"+ns+":scraper")
	code, body := scrape(t, trusting(first, "metrics-first.example"), url, readerToken)
	require.Equal(t, http.StatusOK, code, body)

	second := writeCert(t, dir, "metrics-second.example")
	eventually(t, "the operator to serve the renewed certificate", func() bool {
		code, _, err := tryScrape(trusting(second, "metrics-second.example"), url, readerToken)
		return err == nil && code == http.StatusOK
	})
}

// TestMetricsSecureFlag: --metrics-secure=false asks for plain HTTP; one
// fixed address for HTTPS metrics and HTTP probes is refused.
func TestMetricsSecureFlag(t *testing.T) {
	t.Parallel()
	for args, insecure := range map[string]bool{"": false, "--metrics-secure": false, "--metrics-secure=false": true, "--metrics-secure=true": false} {
		opts := runtime.Options{}
		fs := flag.NewFlagSet("operator", flag.ContinueOnError)
		opts.BindFlags(fs)
		var argv []string
		if args != "" {
			argv = []string{args}
		}
		require.NoError(t, fs.Parse(argv))
		assert.Equal(t, insecure, opts.MetricsInsecure, "%q", args)
	}
	// New checks the addresses and binds nothing (Run does): the same
	// conventional port on both sides is only the input being judged.
	_, err := runtime.New(env.Config, runtime.Options{Name: "op", MetricsAddr: ":8443", HealthAddr: ":8443", LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--metrics-secure=false")
	_, err = runtime.New(env.Config, runtime.Options{Name: "op", MetricsAddr: ":8443", HealthAddr: ":8443", MetricsInsecure: true, LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
	assert.NoError(t, err, "plain metrics may share the probes' server")
}

// waitAllowed waits until the API server's RBAC lets user get /metrics,
// so that the operator's first SubjectAccessReview sees the binding (a
// denial would be cached for 30s).
func waitAllowed(t *testing.T, user string) {
	t.Helper()
	eventually(t, user+" to be allowed to get /metrics", func() bool {
		sar, err := env.Clientset().AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}},
		}, metav1.CreateOptions{})
		return err == nil && sar.Status.Allowed
	})
}

func scrape(t *testing.T, c *http.Client, url, token string) (int, string) {
	t.Helper()
	code, body, err := tryScrape(c, url, token)
	require.NoError(t, err)
	return code, body
}

func tryScrape(c *http.Client, url, token string) (int, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// writeCert writes a self-signed certificate for host as tls.crt and
// tls.key in dir, and returns the certificate.
func writeCert(t *testing.T, dir, host string) []byte {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	require.NoError(t, err)
	// A reload that reads a key of one pair and the certificate of the
	// other is retried: the order does not matter.
	require.NoError(t, os.WriteFile(filepath.Join(dir, runtime.MetricsKeyFile), keyPEM, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, runtime.MetricsCertFile), certPEM, 0o600))
	return certPEM
}

// trusting is a client that trusts only the chain in certPEM (its CA and
// leaf) and checks that the server's certificate names host.
func trusting(certPEM []byte, host string) *http.Client {
	pool := x509.NewCertPool()
	for _, block := range bytes.SplitAfter(certPEM, []byte("-----END CERTIFICATE-----\n")) {
		pool.AppendCertsFromPEM(block)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: host}}}
}
