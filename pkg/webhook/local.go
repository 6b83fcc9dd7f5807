package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/opgen-sdk/opgen/pkg/webhook/certs"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// localRecheck is how often local mode checks whether the CA bundle
// changed (a rotated certificate) and registers again, and how often the
// configurations are checked for webhooks not served (stale.go).
var localRecheck = 10 * time.Second

// registerLocally points the API server at this process: once the
// certificate is ready it applies the Validating and
// MutatingWebhookConfigurations and the converted CRDs' conversion stanza
// with the URL https://<bound>. Every recheck it reads them back and
// applies them again when the CA bundle changed (a rotated certificate) or
// when they no longer point at this process: deleted, or pointing at a
// URL nobody answers. One that points at another live process of the
// operator is left to it. Failures are retried with a backoff. On
// shutdown they are left in place: with failurePolicy Fail the API server
// then rejects the guarded writes with "failed calling webhook", which
// says the operator is down, rather than admitting them unchecked.
func (s *server) registerLocally(ctx context.Context, src certs.Source, bound string) {
	var applied []byte
	base := "https://" + bound
	backoff := wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 1 << 30, Cap: 10 * time.Second}
	for ctx.Err() == nil {
		next := s.recheck
		switch {
		case !src.Ready():
			next = 100 * time.Millisecond // waiting for the certificate
		case applied == nil || !bytes.Equal(applied, src.CABundle()) || s.drifted(ctx, base, applied):
			ca := bytes.Clone(src.CABundle())
			if err := s.applyLocal(ctx, base, ca); err != nil {
				next = backoff.Step()
				if !s.registered.Load() {
					next = min(next, time.Second) // readiness waits for it
				}
				s.log.Error(err, "registering the webhooks with the API server; retrying", "retryIn", next)
				break
			}
			if applied != nil && bytes.Equal(applied, ca) {
				s.log.Info("registered the webhooks again: their configurations no longer pointed at this process", "url", base)
			} else {
				s.log.Info("registered the webhooks with the API server", "url", base, "configurations", []string{ValidatingConfigurationName(s.operator), MutatingConfigurationName(s.operator)}, "conversions", s.convertedCRDs())
			}
			applied = ca
			s.registered.Store(true)
		}
		select {
		case <-ctx.Done():
		case <-time.After(next):
		}
	}
}

// drifted reports whether the registration of this process is gone: a
// configuration it applies is missing, or calls another URL that nobody
// answers, or a converted CRD converts elsewhere (a CRD applied again from
// its manifest). A read that fails says nothing: the next recheck reads
// again.
func (s *server) drifted(ctx context.Context, base string, ca []byte) bool {
	s.mu.Lock()
	hooks := append([]Hook(nil), s.hooks...)
	s.mu.Unlock()
	v, m := Configurations(s.operator, "", hooks, URLClientConfig(base, ca))
	for _, check := range []struct {
		want bool
		get  func(context.Context) (*configuration, error)
	}{{v != nil, s.validatingConfiguration}, {m != nil, s.mutatingConfiguration}} {
		if !check.want {
			continue
		}
		c, err := check.get(ctx)
		if apierrors.IsNotFound(err) {
			return true
		}
		if err == nil && s.callsDeadURL(c.kind, c.name, c.clients, base) {
			return true
		}
	}
	for _, crd := range s.convertedCRDs() {
		obj, err := s.dynamic.Resource(crdResource).Get(ctx, crd, metav1.GetOptions{})
		if err != nil {
			continue
		}
		url, _, _ := unstructured.NestedString(obj.Object, "spec", "conversion", "webhook", "clientConfig", "url")
		if !strings.HasPrefix(url, base+"/") && (url == "" || !answers(url)) {
			return true
		}
	}
	return false
}

// callsDeadURL reports whether a webhook of a configuration calls a URL
// other than base that nobody answers. One that a live process answers
// belongs to another run of the operator, which keeps it.
func (s *server) callsDeadURL(kind, name string, clients []admissionregistrationv1.WebhookClientConfig, base string) bool {
	for _, cc := range clients {
		switch {
		case cc.URL == nil || strings.HasPrefix(*cc.URL, base+"/"):
		case answers(*cc.URL):
			if s.checks.once("other " + *cc.URL) {
				s.log.Info("another live process of this operator serves its webhooks: its registration is left to it", "kind", kind, "name", name, "url", *cc.URL, "this", base)
			}
		default:
			return true
		}
	}
	return false
}

// answers reports whether something accepts connections at the host of
// url: a live process serves there. Local registrations call
// https://127.0.0.1:<port>, which answers at once or refuses at once.
func answers(url string) bool {
	host := strings.TrimPrefix(url, "https://")
	host, _, _ = strings.Cut(host, "/")
	conn, err := net.DialTimeout("tcp", host, time.Second)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

func (s *server) convertedCRDs() []string {
	s.mu.Lock()
	c := s.conversions
	s.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.crds()
}

// applyLocal applies the configurations and conversion stanzas built by
// Configurations and Conversion with the URL base, by server-side apply
// with the operator's field manager.
func (s *server) applyLocal(ctx context.Context, base string, ca []byte) error {
	s.mu.Lock()
	hooks := append([]Hook(nil), s.hooks...)
	s.mu.Unlock()
	cc := URLClientConfig(base, ca)
	v, m := Configurations(s.operator, "", hooks, cc)
	opts := metav1.PatchOptions{FieldManager: s.operator, Force: ptr.To(true)}
	if v != nil {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if _, err := s.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Patch(ctx, v.Name, types.ApplyPatchType, data, opts); err != nil {
			return fmt.Errorf("apply ValidatingWebhookConfiguration %s: %w", v.Name, err)
		}
	}
	if m != nil {
		data, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if _, err := s.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Patch(ctx, m.Name, types.ApplyPatchType, data, opts); err != nil {
			return fmt.Errorf("apply MutatingWebhookConfiguration %s: %w", m.Name, err)
		}
	}
	// The CRDs' stanza goes in by a merge patch that also removes a
	// service: the CRD as installed from config/crd (or by another
	// manager) may name the in-cluster Service, and a URL beside it is
	// refused, where an apply would merge the two.
	conv, err := json.Marshal(Conversion(cc))
	if err != nil {
		return err
	}
	var stanza map[string]any
	if err := json.Unmarshal(conv, &stanza); err != nil {
		return err
	}
	if wh, ok := stanza["webhook"].(map[string]any); ok {
		if c, ok := wh["clientConfig"].(map[string]any); ok {
			c["service"] = nil
		}
	}
	for _, crd := range s.convertedCRDs() {
		data, err := json.Marshal(map[string]any{"spec": map[string]any{"conversion": stanza}})
		if err != nil {
			return err
		}
		if _, err := s.dynamic.Resource(crdResource).Patch(ctx, crd, types.MergePatchType, data, metav1.PatchOptions{FieldManager: s.operator}); err != nil {
			return fmt.Errorf("apply the conversion stanza of CustomResourceDefinition %s: %w", crd, err)
		}
	}
	return nil
}
