package dev

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/opgen-sdk/opgen/cmd/opgen/internal/devcmd"
)

// syncBuffer is a buffer that dev.Run writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestProjectWebhooksRunLocally: opgen dev --webhooks makes the local API
// server call a webhook server on 127.0.0.1, as make run serves a
// kubebuilder project's webhooks, with the certificate it wrote; and the
// kind PROJECT gives a conversion webhook converts through it.
func TestProjectWebhooksRunLocally(t *testing.T) {
	dir := t.TempDir()
	webhooksFile := filepath.Join(dir, "manifests.yaml")
	require.NoError(t, os.WriteFile(webhooksFile, []byte(`---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- admissionReviewVersions: [v1]
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /validate-v1-configmap
  failurePolicy: Fail
  name: vconfigmap.example.com
  objectSelector:
    matchLabels:
      checked: "yes"
  rules:
  - apiGroups: [""]
    apiVersions: [v1]
    operations: [CREATE]
    resources: [configmaps]
  sideEffects: None
`), 0o644))
	project := filepath.Join(dir, "PROJECT")
	require.NoError(t, os.WriteFile(project, []byte(`domain: example.com
resources:
- group: shop
  domain: example.com
  kind: Order
  version: v1
  webhooks:
    conversion: true
`), 0o644))
	crds := filepath.Join(dir, "crds")
	require.NoError(t, os.MkdirAll(crds, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(crds, "orders.yaml"), []byte(orderCRD), 0o644))

	// The project's webhook server: it refuses what it is asked.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	certDir := filepath.Join(dir, "certs")
	var calls sync.Map
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Store(r.URL.Path, true)
			var review admissionv1.AdmissionReview
			_ = json.NewDecoder(r.Body).Decode(&review)
			review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: false, Result: &metav1.Status{Message: "refused by the project's webhook"}}
			_ = json.NewEncoder(w).Encode(review)
		}),
		TLSConfig: &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			c, err := tls.LoadX509KeyPair(filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key"))
			return &c, err
		}},
	}
	go func() { _ = srv.ServeTLS(l, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })

	ctx, cancel := context.WithCancel(context.Background())
	kubeconfig := filepath.Join(dir, "kubeconfig")
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, devcmd.Options{
			CRDDirs: []string{crds}, Kubeconfig: kubeconfig, NoControllerManager: true, NoFakeKubelet: true,
			Webhooks: webhooksFile, WebhookPort: l.Addr().(*net.TCPAddr).Port, WebhookCertDir: certDir, Project: project,
		}, &out, &out)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	deadline := time.Now().Add(3 * time.Minute)
	for !bytes.Contains([]byte(out.String()), []byte("Press Ctrl-C to stop.")) {
		select {
		case err := <-done:
			t.Fatalf("opgen dev stopped: %v\n%s", err, out.String())
		default:
		}
		require.True(t, time.Now().Before(deadline), "waiting for the local control plane and its webhooks:\n%s", out.String())
		time.Sleep(100 * time.Millisecond)
	}
	assert.Contains(t, out.String(), "webhooks: 1 configuration(s) from "+webhooksFile+" and the conversion of orders.shop.example.com call https://127.0.0.1:")

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	_, err = cs.CoreV1().ConfigMaps("default").Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "checked", Labels: map[string]string{"checked": "yes"}}}, metav1.CreateOptions{})
	require.ErrorContains(t, err, "refused by the project's webhook", "the API server called the project's webhook server on 127.0.0.1, trusting its certificate")
	_, called := calls.Load("/validate-v1-configmap")
	assert.True(t, called, "the webhook's path is its Service's")

	ext, err := apiextensionsclient.NewForConfig(cfg)
	require.NoError(t, err)
	crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), "orders.shop.example.com", metav1.GetOptions{})
	require.NoError(t, err)
	require.NotNil(t, crd.Spec.Conversion.Webhook)
	assert.Equal(t, "https://127.0.0.1:"+portOf(l)+"/convert", *crd.Spec.Conversion.Webhook.ClientConfig.URL)
}

func portOf(l net.Listener) string {
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

const orderCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: orders.shop.example.com
spec:
  group: shop.example.com
  names:
    kind: Order
    listKind: OrderList
    plural: orders
    singular: order
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`
