package webhook_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/webhook"
	"github.com/opgen-sdk/opgen/pkg/webhook/certs"
)

const gizmoCRD = "gizmos.whtest.opgen.dev"

// managedFor is a managed certificate for the operator name in ns, with
// lifetimes of seconds: the CA is replaced every 8 s, the serving
// certificate every 2 s. The webhooks are reached at 127.0.0.1 here (no
// Service routes on a test control plane), so it is made for that too.
func managedFor(t *testing.T, name, ns string) certs.Source {
	t.Helper()
	src, err := certs.Managed(certs.ManagedOptions{
		Client:                   env.Clientset(),
		Dynamic:                  dynamic.NewForConfigOrDie(env.Config),
		Namespace:                ns,
		SecretName:               webhook.SecretName(name),
		Service:                  webhook.ServiceName(name),
		IPs:                      []net.IP{net.IPv4(127, 0, 0, 1)},
		ValidatingConfigurations: []string{webhook.ValidatingConfigurationName(name)},
		MutatingConfigurations:   []string{webhook.MutatingConfigurationName(name)},
		CRDs:                     []string{gizmoCRD},
		FieldManager:             name,
		// Seconds, not the defaults' years, with margins that hold on a
		// loaded machine: a serving certificate is renewed 3s before it
		// expires, the old CA leaves the bundle 6s before it does.
		CALifetime: 36 * time.Second,
		Lifetime:   9 * time.Second,
		Overlap:    3 * time.Second,
		Resync:     250 * time.Millisecond,
		Log:        logr.FromSlogHandler(slog.DiscardHandler),
	})
	require.NoError(t, err)
	return src
}

// registerAt creates the configurations of the Gizmo webhooks and the
// CRD's conversion stanza at the URL base, with no caBundle: what opgen
// manifests applies, with a URL for the Service.
func registerAt(t *testing.T, name, base string) {
	t.Helper()
	ctx := context.Background()
	hs := []webhook.Hook{
		{Type: webhook.Validating, GVK: gizmoHub, Resource: "gizmos", Namespaced: true},
		{Type: webhook.Mutating, GVK: gizmoHub, Resource: "gizmos", Namespaced: true},
	}
	cc := webhook.URLClientConfig(base, nil)
	v, m := webhook.Configurations(name, "", hs, cc)
	admission := env.Clientset().AdmissionregistrationV1()
	_, err := admission.ValidatingWebhookConfigurations().Create(ctx, v, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admission.MutatingWebhookConfigurations().Create(ctx, m, metav1.CreateOptions{})
	require.NoError(t, err)
	conv, err := json.Marshal(map[string]any{"spec": map[string]any{"conversion": webhook.Conversion(cc)}})
	require.NoError(t, err)
	_, err = dynamic.NewForConfigOrDie(env.Config).Resource(crdsGVR).Patch(ctx, gizmoCRD, types.MergePatchType, conv, metav1.PatchOptions{})
	require.NoError(t, err)
}

// bundles returns the caBundle of the two configurations' webhooks and of
// the CRD's conversion webhook.
func bundles(ctx context.Context, name string) ([][]byte, error) {
	admission := env.Clientset().AdmissionregistrationV1()
	var out [][]byte
	v, err := admission.ValidatingWebhookConfigurations().Get(ctx, webhook.ValidatingConfigurationName(name), metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	for _, w := range v.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	m, err := admission.MutatingWebhookConfigurations().Get(ctx, webhook.MutatingConfigurationName(name), metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	for _, w := range m.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	crd, err := dynamic.NewForConfigOrDie(env.Config).Resource(crdsGVR).Get(ctx, gizmoCRD, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	b64, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, err
	}
	return append(out, b), nil
}

// TestManagedCertificateRotates: an operator in cluster mode with the
// certificate the runtime manages in a Secret. The runtime fills the
// caBundle of the configurations and of the CRD's conversion webhook;
// while the API server calls both admission webhooks and the conversion
// webhook without pause, and a client makes a new TLS handshake every few
// milliseconds trusting only the bundle the API server holds, the serving
// certificate is renewed several times and the CA replaced once: not one
// request or handshake fails.
func TestManagedCertificateRotates(t *testing.T) {
	ctx := context.Background()
	name := "managed-" + rand.String(5)
	cleanupRegistration(t, name)
	ns := env.Namespace(t) // the operator's namespace: the Secret
	op, err := runtime.New(env.Config, runtime.Options{
		Name:           name,
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true},
		MetricsAddr:    "0",
		Logger:         logr.FromSlogHandler(slog.DiscardHandler),
		Webhook:        runtime.WebhookOptions{Mode: runtime.WebhookModeCluster, Addr: "127.0.0.1:0"},
	})
	require.NoError(t, err)
	require.NoError(t, webhook.Validate(op, gizmoKind, gizmoWebhook{}))
	require.NoError(t, webhook.Default(op, gizmoKind, gizmoWebhook{}))
	require.NoError(t, webhook.Convert(op, gizmoScheme(), gizmoHub, "gizmos"))
	src := managedFor(t, name, ns)
	require.NoError(t, webhook.UseCertificates(op, src))
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- op.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitReady(t, op, done)
	base := "https://" + webhook.Addr(op)
	registerAt(t, name, base)

	t.Log("waiting up to 30s for the runtime to fill every caBundle")
	require.Eventually(t, func() bool {
		held, err := bundles(ctx, name)
		if err != nil {
			return false
		}
		for _, b := range held {
			if len(b) == 0 || !bytes.Equal(b, src.CABundle()) {
				return false
			}
		}
		return true
	}, 30*time.Second, 50*time.Millisecond, "the runtime fills the caBundle of both configurations and the CRD")

	gizmos := dynamic.NewForConfigOrDie(env.Config).Resource(gizmosV1).Namespace(ns)
	alpha := dynamic.NewForConfigOrDie(env.Config).Resource(gizmosV1alpha1).Namespace(ns)
	_, err = gizmos.Create(ctx, unstructuredGizmo(gizmoV1, "stored", map[string]any{"size": int64(1)}), metav1.CreateOptions{})
	require.NoError(t, err)

	var (
		requests, handshakes atomic.Int64
		mu                   sync.Mutex
		failures             []string
		served               = map[string]bool{} // serving certificates seen in handshakes
		signers              = map[string]bool{} // CAs that signed in the Secret
		bundleSizes          = map[int]bool{}
	)
	fail := func(what string, err error) {
		mu.Lock()
		failures = append(failures, what+": "+err.Error())
		mu.Unlock()
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { // both admission webhooks, then the conversion webhook
			for loadCtx.Err() == nil {
				obj := unstructuredGizmo(gizmoV1, "dry-"+rand.String(6), map[string]any{"size": int64(2)})
				if _, err := gizmos.Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
					fail("create (admission webhooks)", err)
				}
				if _, err := alpha.Get(ctx, "stored", metav1.GetOptions{}); err != nil {
					fail("get v1alpha1 (conversion webhook)", err)
				}
				requests.Add(2)
			}
		})
	}
	wg.Go(func() { // new handshakes, trusting what the API server holds
		for loadCtx.Err() == nil {
			pool := x509.NewCertPool()
			held, err := bundles(ctx, name)
			if err != nil {
				fail("read the caBundle", err)
				continue
			}
			if !pool.AppendCertsFromPEM(held[0]) {
				fail("handshake", errNoBundle)
				continue
			}
			conn, err := tls.Dial("tcp", webhook.Addr(op), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
			if err != nil {
				fail("handshake", err)
				continue
			}
			leaf := conn.ConnectionState().PeerCertificates[0]
			_ = conn.Close()
			handshakes.Add(1)
			mu.Lock()
			served[string(leaf.Raw)] = true
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	})
	secrets := env.Clientset().CoreV1().Secrets(ns)
	sawPrune := func() bool { // the CA replaced, and the old one gone from the bundle
		s, err := secrets.Get(ctx, webhook.SecretName(name), metav1.GetOptions{})
		if err != nil {
			fail("read the Secret", err)
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		signers[string(s.Data["ca-signer.crt"])] = true
		bundleSizes[bytes.Count(s.Data[corev1.ServiceAccountRootCAKey], []byte("BEGIN CERTIFICATE"))] = true
		one := bytes.Count(s.Data[corev1.ServiceAccountRootCAKey], []byte("BEGIN CERTIFICATE")) == 1
		return len(signers) >= 2 && one && len(served) >= 4
	}
	t.Log("waiting up to 90s for the CA to be replaced (staged, signing, the old one dropped) and the serving certificate renewed under load")
	ok := assert.Eventually(t, sawPrune, 90*time.Second, 100*time.Millisecond)
	stopLoad()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("figures: %d requests through the API server, %d handshakes, %d serving certificates served, %d CAs signed, bundle sizes %v, %d failures",
		requests.Load(), handshakes.Load(), len(served), len(signers), bundleSizes, len(failures))
	require.True(t, ok, "no CA rotation completed")
	assert.Empty(t, failures, "no request fails during rotation")
	assert.True(t, bundleSizes[2], "the bundle held both CAs during the overlap")
	assert.Positive(t, requests.Load())
	// The rotation goes on (a step every few seconds): the bundles catch
	// up with the Secret within a sync or two.
	assert.Eventually(t, func() bool {
		held, err := bundles(ctx, name)
		if err != nil {
			return false
		}
		for _, b := range held {
			if !bytes.Equal(src.CABundle(), b) {
				return false
			}
		}
		return true
	}, 20*time.Second, 20*time.Millisecond, "every caBundle catches up with the current bundle")
}

var errNoBundle = &noBundleError{}

type noBundleError struct{}

func (*noBundleError) Error() string { return "the configuration holds no CA bundle" }

// TestManagedReplicasAgree: replicas starting at once on a missing Secret
// end with one CA and one serving certificate; a replica started later (a
// restart) adopts them instead of making a new CA.
func TestManagedReplicasAgree(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	name := "agree-" + rand.String(5)
	ns := env.Namespace(t)
	start := func() certs.Source {
		src, err := certs.Managed(certs.ManagedOptions{
			Client: env.Clientset(), Namespace: ns, SecretName: webhook.SecretName(name), Service: webhook.ServiceName(name),
			Resync: 100 * time.Millisecond, Log: logr.FromSlogHandler(slog.DiscardHandler),
		})
		require.NoError(t, err)
		go func() { _ = src.Run(ctx) }()
		return src
	}
	a, b, c := start(), start(), start()
	t.Log("waiting up to 30s for three replicas to load a certificate")
	require.Eventually(t, func() bool { return a.Ready() && b.Ready() && c.Ready() }, 30*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool {
		return bytes.Equal(a.CABundle(), b.CABundle()) && bytes.Equal(b.CABundle(), c.CABundle())
	}, 30*time.Second, 20*time.Millisecond, "the replicas converge on one bundle")
	certOf := func(s certs.Source) []byte {
		cert, err := s.GetCertificate(nil)
		require.NoError(t, err)
		return cert.Certificate[0]
	}
	assert.Equal(t, certOf(a), certOf(b))
	assert.Equal(t, certOf(b), certOf(c))

	later := start()
	require.Eventually(t, later.Ready, 30*time.Second, 20*time.Millisecond)
	assert.Equal(t, a.CABundle(), later.CABundle(), "a restarted replica adopts the CA")
	assert.Equal(t, certOf(a), certOf(later))
}
