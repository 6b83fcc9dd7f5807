package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// ManagedOptions configure Managed. Client, Namespace, SecretName and
// Service are required.
type ManagedOptions struct {
	// Client reads and writes the Secret and the webhook configurations.
	Client kubernetes.Interface
	// Dynamic patches the CRDs' conversion caBundle; needed with CRDs.
	Dynamic dynamic.Interface
	// Namespace holds the Secret and the Service.
	Namespace string
	// SecretName is the Secret of the CA and the serving certificate.
	SecretName string
	// Service is the webhook Service: the certificate is made for
	// <Service>, <Service>.<Namespace>, <Service>.<Namespace>.svc and
	// <Service>.<Namespace>.svc.cluster.local.
	Service string
	// Hosts and IPs are further names of the certificate.
	Hosts []string
	IPs   []net.IP
	// ValidatingConfigurations, MutatingConfigurations and CRDs are the
	// objects whose caBundle the Source keeps equal to its CA bundle
	// (every webhook of the configurations; the conversion webhook of the
	// CRDs). One that does not exist is skipped until it does.
	ValidatingConfigurations []string
	MutatingConfigurations   []string
	CRDs                     []string
	// FieldManager names the writes. Default "opgen-webhook-certs".
	FieldManager string
	// CALifetime is the CA's life (default one year), Lifetime the serving
	// certificate's (default 90 days); each is replaced two thirds into
	// its life.
	CALifetime, Lifetime time.Duration
	// Overlap is how long a new CA is in the bundle before it signs, and
	// how long the old one stays after: longer than every replica and the
	// API server need to see a change. Default 5 minutes; at least twice
	// Resync.
	Overlap time.Duration
	// Resync is how often each replica reads the Secret and the caBundles
	// again. Default 1 minute.
	Resync time.Duration
	Log    logr.Logger
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// managed is the Source Managed returns.
type managed struct {
	o      ManagedOptions
	hosts  []string
	cert   atomic.Pointer[tls.Certificate]
	bundle atomic.Pointer[[]byte]
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Managed returns the Source of a CA and serving certificate the runtime
// makes and rotates itself in a Secret, for an operator in a cluster
// without cert-manager. Every replica runs it: each reads the Secret, and
// whichever is first to find it missing or due writes the next state
// (the others' writes conflict on the resourceVersion and they read it
// again), loads the serving certificate, and keeps the caBundle of the
// configurations and CRDs equal to the Secret's CA bundle. See plan for
// the rotation and its overlap.
func Managed(o ManagedOptions) (Source, error) {
	var missing []string
	for name, v := range map[string]string{"Namespace": o.Namespace, "SecretName": o.SecretName, "Service": o.Service} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if o.Client == nil {
		missing = append(missing, "Client")
	}
	if len(o.CRDs) > 0 && o.Dynamic == nil {
		missing = append(missing, "Dynamic (for CRDs)")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("certs.Managed: set %s", strings.Join(missing, ", "))
	}
	if o.FieldManager == "" {
		o.FieldManager = "opgen-webhook-certs"
	}
	if o.CALifetime <= 0 {
		o.CALifetime = 365 * 24 * time.Hour
	}
	if o.Lifetime <= 0 {
		o.Lifetime = 90 * 24 * time.Hour
	}
	if o.Resync <= 0 {
		o.Resync = time.Minute
	}
	if o.Overlap <= 0 {
		o.Overlap = max(5*time.Minute, 2*o.Resync)
	}
	if o.Overlap < 2*o.Resync {
		return nil, fmt.Errorf("certs.Managed: Overlap %s must be at least twice Resync %s, or a replica may serve a certificate the bundle no longer trusts", o.Overlap, o.Resync)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	svc, ns := o.Service, o.Namespace
	hosts := append([]string{svc, svc + "." + ns, svc + "." + ns + ".svc", svc + "." + ns + ".svc.cluster.local"}, o.Hosts...)
	return &managed{o: o, hosts: hosts}, nil
}

func (m *managed) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := m.cert.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("webhook: no certificate yet")
}

func (m *managed) Ready() bool { return m.cert.Load() != nil }

func (m *managed) CABundle() []byte {
	if b := m.bundle.Load(); b != nil {
		return *b
	}
	return nil
}

// Run syncs every Resync until ctx ends; a failed sync is retried with a
// backoff and logged with its cause and the next try.
func (m *managed) Run(ctx context.Context) error {
	backoff := wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 1 << 30, Cap: m.o.Resync}
	for ctx.Err() == nil {
		next := m.o.Resync
		if err := m.sync(ctx); err != nil && ctx.Err() == nil {
			next = backoff.Step()
			m.o.Log.Error(err, "managing the webhook certificate; retrying", "secret", m.o.Namespace+"/"+m.o.SecretName, "retryIn", next)
		} else {
			backoff.Duration, backoff.Steps = 200*time.Millisecond, 1<<30
		}
		select {
		case <-ctx.Done():
		case <-time.After(next):
		}
	}
	return nil
}

// sync reads the Secret, writes its next state when one is due, loads the
// serving certificate and injects the bundle.
func (m *managed) sync(ctx context.Context) error {
	secrets := m.o.Client.CoreV1().Secrets(m.o.Namespace)
	for range 5 { // conflicts with other replicas: read again
		secret, err := secrets.Get(ctx, m.o.SecretName, metav1.GetOptions{})
		found := err == nil
		if apierrors.IsNotFound(err) {
			secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: m.o.SecretName, Namespace: m.o.Namespace}}
		} else if err != nil {
			return fmt.Errorf("read Secret %s/%s: %w", m.o.Namespace, m.o.SecretName, err)
		}
		var st *state
		if found {
			if st, err = readState(secret); err != nil {
				m.o.Log.Info("the webhook certificate Secret cannot be read; making a new CA and certificate", "secret", m.o.Namespace+"/"+m.o.SecretName, "error", err.Error())
			}
		}
		next, changes, err := plan(st, m.o.SecretName, m.hosts, m.o.IPs, lifetimes{ca: m.o.CALifetime, serving: m.o.Lifetime, overlap: m.o.Overlap}, m.o.Now())
		if err != nil {
			return fmt.Errorf("make the webhook certificate: %w", err)
		}
		if len(changes) > 0 {
			next.write(secret)
			opts := metav1.CreateOptions{FieldManager: m.o.FieldManager}
			if found {
				secret, err = secrets.Update(ctx, secret, metav1.UpdateOptions{FieldManager: m.o.FieldManager})
			} else {
				secret, err = secrets.Create(ctx, secret, opts)
			}
			if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
				continue // another replica wrote first: take its state
			}
			if err != nil {
				return fmt.Errorf("write Secret %s/%s: %w", m.o.Namespace, m.o.SecretName, err)
			}
			m.o.Log.Info("webhook certificate updated", "secret", m.o.Namespace+"/"+m.o.SecretName, "changes", changes,
				"servingExpires", next.serving.Cert.NotAfter, "caExpires", next.signer.Cert.NotAfter)
		}
		if err := m.load(secret); err != nil {
			return err
		}
		return m.inject(ctx)
	}
	return fmt.Errorf("write Secret %s/%s: conflicts with other writers 5 times in a row", m.o.Namespace, m.o.SecretName)
}

// load serves the Secret's serving certificate and bundle.
func (m *managed) load(s *corev1.Secret) error {
	pair, err := tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return fmt.Errorf("load the serving certificate of Secret %s/%s: %w", m.o.Namespace, m.o.SecretName, err)
	}
	bundle := bytes.Clone(s.Data[CAFile])
	if old := m.cert.Load(); old == nil || !bytes.Equal(old.Certificate[0], pair.Certificate[0]) {
		m.cert.Store(&pair)
	}
	m.bundle.Store(&bundle)
	return nil
}

// inject makes the caBundle of every webhook of the configurations and of
// the CRDs' conversion webhook equal to the bundle, patching only what
// differs: a steady state writes nothing, and whatever reset a caBundle
// is undone at the next sync.
func (m *managed) inject(ctx context.Context) error {
	bundle := m.CABundle()
	admission := m.o.Client.AdmissionregistrationV1()
	var errs []error
	for _, name := range m.o.ValidatingConfigurations {
		c, err := admission.ValidatingWebhookConfigurations().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			errs = append(errs, skipMissing(err, "ValidatingWebhookConfiguration", name))
			continue
		}
		var stale []string
		for _, w := range c.Webhooks {
			if !bytes.Equal(w.ClientConfig.CABundle, bundle) {
				stale = append(stale, w.Name)
			}
		}
		if err := m.patchWebhooks(stale, bundle, func(patch []byte) error {
			_, err := admission.ValidatingWebhookConfigurations().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: m.o.FieldManager})
			return err
		}); err != nil {
			errs = append(errs, fmt.Errorf("patch the caBundle of ValidatingWebhookConfiguration %s: %w", name, err))
		}
	}
	for _, name := range m.o.MutatingConfigurations {
		c, err := admission.MutatingWebhookConfigurations().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			errs = append(errs, skipMissing(err, "MutatingWebhookConfiguration", name))
			continue
		}
		var stale []string
		for _, w := range c.Webhooks {
			if !bytes.Equal(w.ClientConfig.CABundle, bundle) {
				stale = append(stale, w.Name)
			}
		}
		if err := m.patchWebhooks(stale, bundle, func(patch []byte) error {
			_, err := admission.MutatingWebhookConfigurations().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: m.o.FieldManager})
			return err
		}); err != nil {
			errs = append(errs, fmt.Errorf("patch the caBundle of MutatingWebhookConfiguration %s: %w", name, err))
		}
	}
	for _, name := range m.o.CRDs {
		crd, err := m.o.Dynamic.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			errs = append(errs, skipMissing(err, "CustomResourceDefinition", name))
			continue
		}
		if strategy, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy"); strategy != "Webhook" {
			continue
		}
		current, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
		if current == encodeBase64(bundle) {
			continue
		}
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"conversion": map[string]any{"webhook": map[string]any{
			"clientConfig": map[string]any{"caBundle": bundle}}}}})
		if _, err := m.o.Dynamic.Resource(crdResource).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: m.o.FieldManager}); err != nil {
			errs = append(errs, fmt.Errorf("patch the conversion caBundle of CustomResourceDefinition %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// patchWebhooks sets the caBundle of the named webhooks with one strategic
// merge patch (webhooks merge by name).
func (m *managed) patchWebhooks(names []string, bundle []byte, patch func([]byte) error) error {
	if len(names) == 0 {
		return nil
	}
	var webhooks []map[string]any
	for _, n := range names {
		webhooks = append(webhooks, map[string]any{"name": n, "clientConfig": map[string]any{"caBundle": bundle}})
	}
	data, err := json.Marshal(map[string]any{"webhooks": webhooks})
	if err != nil {
		return err
	}
	return patch(data)
}

// skipMissing is nil for an object that does not exist (yet): nothing to
// inject.
func skipMissing(err error, kind, name string) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("read %s %s: %w", kind, name, err)
}

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
