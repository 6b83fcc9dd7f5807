package runtime

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	certutil "k8s.io/client-go/util/cert"
)

// Secure metrics follow controller-runtime's pkg/metrics/filters and
// kube-controller-manager: the API server authenticates the scraper's
// bearer token (TokenReview) and authorizes it (SubjectAccessReview), with
// k8s.io/apiserver's delegating authenticator and authorizer, which cache
// the answers.

// Secure metrics' certificate files in Options.MetricsCertDir, the names
// of a kubernetes.io/tls Secret's keys (and cert-manager's).
const (
	MetricsCertFile = "tls.crt"
	MetricsKeyFile  = "tls.key"
)

// reviewBackoff retries a TokenReview or SubjectAccessReview that failed
// for a transient reason: the API server's own default for its webhooks
// (k8s.io/apiserver/pkg/server/options.DefaultAuthWebhookRetryBackoff, not
// imported for this one value).
var reviewBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// checkMetricsAddr rejects one fixed address for secure metrics and the
// health probes: the probes are plain HTTP, the metrics HTTPS.
func (o Options) checkMetricsAddr() error {
	if o.MetricsInsecure || o.MetricsAddr != o.HealthAddr || o.MetricsAddr == "0" {
		return nil
	}
	if _, port, err := net.SplitHostPort(o.MetricsAddr); err == nil && port == "0" {
		return nil // two free ports
	}
	return fmt.Errorf("runtime.New: Options.MetricsAddr and HealthAddr are both %q, but secure metrics are served over HTTPS and the health probes over HTTP: give them different addresses (--metrics-bind-address, --health-probe-bind-address), or serve plain metrics with --metrics-secure=false (Options.MetricsInsecure)", o.MetricsAddr)
}

// metricsAuth lets a request through when the API server authenticates its
// bearer token and authorizes the user to get the request's path as a
// non-resource URL.
type metricsAuth struct {
	authn authenticator.Request
	authz authorizer.Authorizer
	log   logr.Logger
	// failed bounds the error log of reviews that could not be made (the
	// API server is down, or the operator may not create reviews).
	failed *rate.Sometimes
}

func (o *Operator) newMetricsAuth() (*metricsAuth, error) {
	authn, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: false},
		CacheTTL:                 time.Minute,
		TokenAccessReviewClient:  o.clientset.AuthenticationV1(),
		TokenAccessReviewTimeout: 10 * time.Second,
		WebhookRetryBackoff:      &reviewBackoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("runtime: secure metrics: build the authenticator: %w", err)
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: o.clientset.AuthorizationV1(),
		AllowCacheTTL:             5 * time.Minute,
		DenyCacheTTL:              30 * time.Second,
		WebhookRetryBackoff:       &reviewBackoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("runtime: secure metrics: build the authorizer: %w", err)
	}
	return &metricsAuth{authn: authn, authz: authz, log: o.log.WithName("metrics"), failed: &rate.Sometimes{Interval: 30 * time.Second}}, nil
}

// invalidToken is the error of k8s.io/apiserver's bearer token
// authenticator for a token the API server did not accept: the client's
// fault, unlike a review that could not be made.
const invalidToken = "invalid bearer token"

// wrap answers 401 without a valid bearer token, 403 when its user may not
// get the path, and 500 when the API server could not be asked.
func (a *metricsAuth) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok, err := a.authn.AuthenticateRequest(r)
		if err != nil && err.Error() != invalidToken {
			a.reviewFailed(w, "TokenReview", err)
			return
		}
		if !ok {
			a.log.V(1).Info("refused a request without a valid bearer token", "remote", r.RemoteAddr, "path", r.URL.Path)
			http.Error(w, "Unauthorized: send a bearer token the API server accepts (a ServiceAccount token)", http.StatusUnauthorized)
			return
		}
		attrs := authorizer.AttributesRecord{User: res.User, Verb: strings.ToLower(r.Method), Path: r.URL.Path}
		decision, reason, err := a.authz.Authorize(r.Context(), attrs)
		if err != nil {
			a.reviewFailed(w, "SubjectAccessReview", err)
			return
		}
		if decision != authorizer.DecisionAllow {
			a.log.V(1).Info("refused an unauthorized request", "user", res.User.GetName(), "path", r.URL.Path, "reason", reason)
			http.Error(w, fmt.Sprintf("Forbidden: user %q may not %s %s: bind it to a ClusterRole with nonResourceURLs [%s] verbs [%s]",
				res.User.GetName(), attrs.Verb, r.URL.Path, r.URL.Path, attrs.Verb), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (a *metricsAuth) reviewFailed(w http.ResponseWriter, review string, err error) {
	a.failed.Do(func() {
		a.log.Error(err, "could not check a metrics request with the API server: is it reachable, and may the operator create "+
			"tokenreviews (authentication.k8s.io) and subjectaccessreviews (authorization.k8s.io)? The scrape was refused", "review", review)
	})
	http.Error(w, "could not check the request with the API server ("+review+"); see the operator's log", http.StatusInternalServerError)
}

// metricsTLS returns the TLS configuration of secure metrics: the
// certificate in Options.MetricsCertDir, reloaded when its files change
// until ctx ends, or a self-signed one.
func (o *Operator) metricsTLS(ctx context.Context) (*tls.Config, error) {
	// HTTP/2 is off: a scrape needs none of it, and it closes the class of
	// HTTP/2 stream floods (Rapid Reset), as kubebuilder's scaffold does.
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	if dir := o.opts.MetricsCertDir; dir != "" {
		files, err := dynamiccertificates.NewDynamicServingContentFromFiles("metrics-serving-cert",
			filepath.Join(dir, MetricsCertFile), filepath.Join(dir, MetricsKeyFile))
		if err != nil {
			return nil, fmt.Errorf("runtime: Options.MetricsCertDir (--metrics-cert-dir) %s: %w; it must hold %s and %s", dir, err, MetricsCertFile, MetricsKeyFile)
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
