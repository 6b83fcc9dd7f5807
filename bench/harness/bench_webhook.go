package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	loadv1 "github.com/opgen-sdk/opgen/bench/apis/load/v1"
	todov1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
	todov1alpha1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1alpha1"
	"github.com/opgen-sdk/opgen/pkg/webhook"
)

// The servers of the webhook benchmark.
const bare = "bare"

// loadWebhook is the same validation and defaulting for every server: a
// Load needs an image and a non-negative replica count; replicas default
// to 1.
type loadWebhook struct{}

func (loadWebhook) check(l *loadv1.Load) error {
	var errs field.ErrorList
	if l.Spec.Image == "" {
		errs = append(errs, field.Required(field.NewPath("spec", "image"), "a Load runs an image"))
	}
	if l.Spec.Replicas < 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "replicas"), l.Spec.Replicas, "must not be negative"))
	}
	return errs.ToAggregate()
}

func (w loadWebhook) ValidateCreate(_ context.Context, l *loadv1.Load) (webhook.Warnings, error) {
	return nil, w.check(l)
}
func (w loadWebhook) ValidateUpdate(_ context.Context, _, l *loadv1.Load) (webhook.Warnings, error) {
	return nil, w.check(l)
}
func (loadWebhook) ValidateDelete(context.Context, *loadv1.Load) (webhook.Warnings, error) {
	return nil, nil
}
func (loadWebhook) Default(_ context.Context, l *loadv1.Load) error {
	if l.Spec.Replicas == 0 {
		l.Spec.Replicas = 1
	}
	return nil
}

// crLoadWebhook is loadWebhook for controller-runtime's interfaces.
type crLoadWebhook struct{ loadWebhook }

func (w crLoadWebhook) ValidateCreate(ctx context.Context, l *loadv1.Load) (admission.Warnings, error) {
	_, err := w.loadWebhook.ValidateCreate(ctx, l)
	return nil, err
}
func (w crLoadWebhook) ValidateUpdate(ctx context.Context, o, l *loadv1.Load) (admission.Warnings, error) {
	_, err := w.loadWebhook.ValidateUpdate(ctx, o, l)
	return nil, err
}
func (crLoadWebhook) ValidateDelete(context.Context, *loadv1.Load) (admission.Warnings, error) {
	return nil, nil
}

// webhookServer is one server under test: its base URL.
type webhookServer struct {
	name  string
	base  string
	paths map[string]string // the server's own path of /validate, /mutate, /convert, when another
	stop  func()
}

func (sv *webhookServer) url(path string) string {
	if p, ok := sv.paths[path]; ok {
		return sv.base + p
	}
	return sv.base + path
}

// benchWebhook measures the admission and conversion webhooks in process,
// over HTTPS with keep-alive, with the same requests against three
// servers taking turns round by round: opgen's (a running Operator's
// webhook server), controller-runtime's webhook.Server, and a bare
// net/http TLS handler that decodes the review and the object and answers
// (the floor). Admission: a validating and a mutating AdmissionReview of a
// benchmark Load, one client sending one request at a time. Conversion: a
// ConversionReview of 1,000 todo-operator Todos from v1alpha1 to v1 (the
// example's generated conversions, in every server).
func (s *suite) benchWebhook(ctx context.Context) error {
	dir, err := os.MkdirTemp(s.work, "webhook-")
	if err != nil {
		return err
	}
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), certPEM, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), keyPEM, 0o600); err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 2,
	}}
	defer client.CloseIdleConnections()

	scheme := k8sruntime.NewScheme()
	if err := errors.Join(loadv1.AddToScheme(scheme), todov1.AddToScheme(scheme), todov1alpha1.AddToScheme(scheme)); err != nil {
		return err
	}
	var servers []*webhookServer
	defer func() {
		for _, sv := range servers {
			sv.stop()
		}
	}()
	for _, start := range []func(context.Context, string, string, []byte, []byte, *k8sruntime.Scheme) (*webhookServer, error){
		startOpgenWebhooks, startCRWebhooks, startBareWebhooks,
	} {
		sv, err := start(ctx, s.env.Kubeconfig, dir, certPEM, keyPEM, scheme)
		if err != nil {
			return err
		}
		servers = append(servers, sv)
	}

	validate, mutate, convert, err := webhookRequests()
	if err != nil {
		return err
	}
	admissionN, convertN := 3000, 20
	if s.cfg.quick {
		admissionN, convertN = 300, 4
	}
	for round := range s.cfg.rounds {
		for i := range servers {
			sv := servers[(i+round)%len(servers)] // each server goes first in turn
			for _, r := range []struct {
				metric, path string
				body         []byte
				n            int
				check        func([]byte) error
			}{
				{"webhook.validate", "/validate", validate, admissionN, admissionAllowed},
				{"webhook.mutate", "/mutate", mutate, admissionN, admissionPatched},
				{"webhook.convert1000", "/convert", convert, convertN, converted(1000)},
			} {
				if sv.name == bare && r.metric == "webhook.mutate" {
					continue // the floor is measured on the validating request
				}
				if _, err := timeRequests(ctx, client, sv.url(r.path), r.body, max(r.n/10, 2), r.check); err != nil { // warm-up
					return fmt.Errorf("%s %s: %w", sv.name, r.path, err)
				}
				lat, err := timeRequests(ctx, client, sv.url(r.path), r.body, r.n, r.check)
				if err != nil {
					return fmt.Errorf("%s %s: %w", sv.name, r.path, err)
				}
				s.res.add(r.metric+".p50", sv.name, percentile(lat, 50))
				s.res.add(r.metric+".p99", sv.name, percentile(lat, 99))
				s.res.add(r.metric+".mean", sv.name, mean(lat))
				if r.metric == "webhook.convert1000" {
					s.res.add("webhook.convert.objectsPerSecond", sv.name, 1000/(median(lat)/1000))
				}
			}
		}
		for _, fw := range []string{opgen, cr} {
			for _, p := range []string{"p50", "p99"} {
				m := "webhook.validate." + p
				got, floor := s.res.get(m, fw), s.res.get(m, bare)
				s.res.add("webhook.validate.overhead."+p, fw, got[len(got)-1]-floor[len(floor)-1])
			}
		}
		logf("   round %d: validate p50 opgen %.3f ms, cr %.3f ms, bare %.3f ms", round+1,
			last(s.res.get("webhook.validate.p50", opgen)), last(s.res.get("webhook.validate.p50", cr)), last(s.res.get("webhook.validate.p50", bare)))
	}
	return nil
}

func last(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return v[len(v)-1]
}

func mean(v []float64) float64 {
	var sum float64
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v))
}

// timeRequests posts body to url n times, one after the other, checks each
// answer, and returns the latencies in milliseconds.
func timeRequests(ctx context.Context, client *http.Client, url string, body []byte, n int, check func([]byte) error) ([]float64, error) {
	out := make([]float64, 0, n)
	for range n {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		elapsed := time.Since(start)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("status %d: %s", resp.StatusCode, data)
		}
		if err := check(data); err != nil {
			return nil, err
		}
		out = append(out, float64(elapsed.Microseconds())/1000)
	}
	return out, nil
}

// webhookRequests are the three request bodies.
func webhookRequests() (validate, mutate, convert []byte, err error) {
	obj := newLoad(opgenGroup, "bench", "load-1", 1)
	obj.TypeMeta = metav1.TypeMeta{APIVersion: loadv1.SchemeGroupVersion.String(), Kind: "Load"}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, nil, nil, err
	}
	obj.Spec.Replicas = 0
	toDefault, err := json.Marshal(obj)
	if err != nil {
		return nil, nil, nil, err
	}
	review := func(raw []byte) ([]byte, error) {
		gvk := metav1.GroupVersionKind{Group: loadv1.SchemeGroupVersion.Group, Version: "v1", Kind: "Load"}
		return json.Marshal(admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{
				UID: types.UID("0b9c5f4e-8c1d-4a55-9d6f-5a2f1a3c7e01"), Kind: gvk, RequestKind: &gvk,
				Resource: metav1.GroupVersionResource{Group: gvk.Group, Version: "v1", Resource: "loads"},
				Name:     "load-1", Namespace: "bench", Operation: admissionv1.Create,
				Object: k8sruntime.RawExtension{Raw: raw},
			},
		})
	}
	if validate, err = review(raw); err != nil {
		return nil, nil, nil, err
	}
	if mutate, err = review(toDefault); err != nil {
		return nil, nil, nil, err
	}
	objects := make([]k8sruntime.RawExtension, 1000)
	for i := range objects {
		due := metav1.NewTime(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
		td := todov1alpha1.Todo{
			TypeMeta:   metav1.TypeMeta{APIVersion: todov1alpha1.SchemeGroupVersion.String(), Kind: "Todo"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("todo-%04d", i), Namespace: "bench", UID: types.UID(fmt.Sprintf("uid-%04d", i)), Labels: map[string]string{"app": "todo"}},
			Spec:       todov1alpha1.TodoSpec{Title: fmt.Sprintf("Todo number %d: %s", i, strings.Repeat("words ", 8)), Done: i%2 == 0, DueDate: &due},
		}
		if objects[i].Raw, err = json.Marshal(td); err != nil {
			return nil, nil, nil, err
		}
	}
	convert, err = json.Marshal(apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Request:  &apiextensionsv1.ConversionRequest{UID: "7d0c2b9a-1f3e-4c8b-a6d5-0e9f8b7a6c54", DesiredAPIVersion: todov1.SchemeGroupVersion.String(), Objects: objects},
	})
	return validate, mutate, convert, err
}

func admissionAllowed(data []byte) error {
	var r admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	if r.Response == nil || !r.Response.Allowed {
		return fmt.Errorf("not allowed: %s", data)
	}
	return nil
}

func admissionPatched(data []byte) error {
	var r admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	if r.Response == nil || !r.Response.Allowed || !bytes.Contains(r.Response.Patch, []byte("/spec/replicas")) {
		return fmt.Errorf("no replicas default in the answer: %s", data)
	}
	return nil
}

func converted(n int) func([]byte) error {
	return func(data []byte) error {
		var r apiextensionsv1.ConversionReview
		if err := json.Unmarshal(data, &r); err != nil {
			return err
		}
		if r.Response == nil || r.Response.Result.Status != metav1.StatusSuccess || len(r.Response.ConvertedObjects) != n {
			return fmt.Errorf("conversion failed: %.300s", data)
		}
		return nil
	}
}
