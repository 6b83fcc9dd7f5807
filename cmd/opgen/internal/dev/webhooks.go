package dev

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/cmd/opgen/internal/devcmd"
)

// A project's webhooks, run locally: the API server of the local control
// plane calls the webhook server of the project's manager (make run, go
// run ./cmd) on 127.0.0.1, as a cluster calls it through the webhook
// Service. The webhook configurations of config/webhook/manifests.yaml
// (what +kubebuilder:webhook markers make) are created with a URL in the
// place of the Service; the CRDs of the kinds with a conversion webhook
// (PROJECT's webhooks.conversion) get the conversion that kubebuilder's
// kustomize patch gives them in a cluster, with that URL; and the serving
// certificate, for 127.0.0.1, is written where controller-runtime's
// webhook server reads it by default.

// webhooks installs the project's webhooks against cfg, pointing at
// 127.0.0.1:port, with a certificate written into certDir, and says what
// it did on out.
func webhooks(ctx context.Context, cfg *rest.Config, opts devcmd.Options, out io.Writer) error {
	ca, err := writeServingCert(opts.WebhookCertDir)
	if err != nil {
		return fmt.Errorf("the webhook server's certificate: %w", err)
	}
	base := fmt.Sprintf("https://127.0.0.1:%d", opts.WebhookPort)
	n, err := createWebhookConfigs(ctx, cfg, opts.Webhooks, base, ca)
	if err != nil {
		return err
	}
	kinds, err := conversionKinds(opts.Project)
	if err != nil {
		return err
	}
	converted, err := convertThrough(ctx, cfg, kinds, base, ca)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "webhooks: %d configuration(s) from %s and the conversion of %s call %s;\n", n, opts.Webhooks, orNone(converted), base)
	fmt.Fprintf(out, "its certificate is in %s, where controller-runtime's webhook server reads it by default\n", opts.WebhookCertDir)
	return nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "no CRD"
	}
	return strings.Join(names, ", ")
}

// writeServingCert writes a certificate for 127.0.0.1 and localhost,
// signed by a CA of its own, as tls.crt and tls.key into dir, and returns
// the CA's certificate (PEM) for the API server to trust.
func writeServingCert(dir string) ([]byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "opgen dev webhook CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), certPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), nil
}

// createWebhookConfigs creates the webhook configurations of the manifests
// file path, each webhook calling base plus its Service's path, and
// returns how many it created.
func createWebhookConfigs(ctx context.Context, cfg *rest.Config, path, base string, ca []byte) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("--webhooks: %w; give the webhook manifests controller-gen or opgen wrote (config/webhook/manifests.yaml)", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	url := func(svc *admissionregistrationv1.ServiceReference) *string {
		u := base
		if svc != nil && svc.Path != nil {
			u += *svc.Path
		}
		return &u
	}
	n := 0
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			return n, nil
		} else if err != nil {
			return n, fmt.Errorf("%s: %w", path, err)
		}
		raw, err := yaml.Marshal(doc)
		if err != nil {
			return n, err
		}
		switch doc["kind"] {
		case "ValidatingWebhookConfiguration":
			var c admissionregistrationv1.ValidatingWebhookConfiguration
			if err := yaml.UnmarshalStrict(raw, &c); err != nil {
				return n, fmt.Errorf("%s: %w", path, err)
			}
			for i := range c.Webhooks {
				c.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: url(c.Webhooks[i].ClientConfig.Service), CABundle: ca}
			}
			_, err = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &c, metav1.CreateOptions{})
		case "MutatingWebhookConfiguration":
			var c admissionregistrationv1.MutatingWebhookConfiguration
			if err := yaml.UnmarshalStrict(raw, &c); err != nil {
				return n, fmt.Errorf("%s: %w", path, err)
			}
			for i := range c.Webhooks {
				c.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: url(c.Webhooks[i].ClientConfig.Service), CABundle: ca}
			}
			_, err = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &c, metav1.CreateOptions{})
		default:
			continue
		}
		if err != nil {
			return n, fmt.Errorf("create the webhook configuration %s of %s: %w", doc["metadata"], path, err)
		}
		n++
	}
}

// conversionKinds returns the group/Kind of each kind PROJECT (at path)
// gives a conversion webhook; none without a PROJECT file.
func conversionKinds(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var p struct {
		Domain    string `json:"domain"`
		Resources []struct {
			Group, Domain, Kind string
			Webhooks            *struct{ Conversion bool } `json:"webhooks"`
		} `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []string
	for _, r := range p.Resources {
		if r.Webhooks == nil || !r.Webhooks.Conversion {
			continue
		}
		group := r.Group
		if r.Domain != "" {
			group = strings.TrimPrefix(r.Group+"."+r.Domain, ".")
		}
		out = append(out, group+"/"+r.Kind)
	}
	return out, nil
}

// convertThrough gives the CRDs of kinds (group/Kind) the conversion
// webhook at base/convert, as kubebuilder's webhook_in_<plural>.yaml
// patch does in a cluster, and returns the CRDs' names.
func convertThrough(ctx context.Context, cfg *rest.Config, kinds []string, base string, ca []byte) ([]string, error) {
	if len(kinds) == 0 {
		return nil, nil
	}
	cs, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	crds, err := cs.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, k := range kinds {
		group, kind, _ := strings.Cut(k, "/")
		found := false
		for i := range crds.Items {
			crd := &crds.Items[i]
			if crd.Spec.Group != group || crd.Spec.Names.Kind != kind {
				continue
			}
			found = true
			url := base + "/convert"
			crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: ca},
					ConversionReviewVersions: []string{"v1"},
				},
			}
			if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
				return names, fmt.Errorf("give %s its conversion webhook: %w", crd.Name, err)
			}
			names = append(names, crd.Name)
		}
		if !found {
			return names, fmt.Errorf("PROJECT gives %s a conversion webhook, but no CRD of it is installed: pass its directory with --crds", k)
		}
	}
	return names, nil
}
