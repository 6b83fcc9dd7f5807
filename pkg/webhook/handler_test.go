package webhook_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/webhook"
)

// offlineOperator is an operator that is never run: the handlers are
// driven directly.
func offlineOperator(t *testing.T) *runtime.Operator {
	t.Helper()
	op, err := runtime.New(&rest.Config{Host: "https://127.0.0.1:1"}, runtime.Options{
		Name: "gizmo-operator", LeaderElection: runtime.LeaderElectionOptions{Disabled: true}, Logger: logr.Discard(),
	})
	require.NoError(t, err)
	return op
}

func registeredHandler(t *testing.T) (*runtime.Operator, http.Handler) {
	t.Helper()
	op := offlineOperator(t)
	require.NoError(t, webhook.Validate(op, gizmoKind, gizmoWebhook{}))
	require.NoError(t, webhook.Default(op, gizmoKind, gizmoWebhook{}))
	require.NoError(t, webhook.Convert(op, gizmoScheme(), gizmoHub, "gizmos"))
	return op, webhook.HandlerFor(op)
}

func post(t *testing.T, h http.Handler, path string, body any) *httptest.ResponseRecorder {
	t.Helper()
	data, err := json.Marshal(body)
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(data)))
	return rec
}

func admissionReview(op admissionv1.Operation, obj, old any) *admissionv1.AdmissionReview {
	raw := func(o any) k8sruntime.RawExtension {
		if o == nil {
			return k8sruntime.RawExtension{}
		}
		data, _ := json.Marshal(o)
		return k8sruntime.RawExtension{Raw: data}
	}
	return &admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: types.UID("uid-1"), Operation: op, Namespace: "ns", Name: "g",
			Object: raw(obj), OldObject: raw(old),
		},
	}
}

func admit(t *testing.T, h http.Handler, path string, review *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
	t.Helper()
	rec := post(t, h, path, review)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var out admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	require.NotNil(t, out.Response)
	assert.Equal(t, review.Request.UID, out.Response.UID)
	assert.Equal(t, "AdmissionReview", out.Kind)
	return out.Response
}

func gizmo(size int32, color string) *Gizmo {
	return &Gizmo{
		TypeMeta:   metav1.TypeMeta{APIVersion: gizmoV1.String(), Kind: "Gizmo"},
		ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "ns"},
		Spec:       GizmoSpec{Size: size, Color: color},
	}
}

const (
	validatePath = "/validate-whtest-opgen-dev-v1-gizmo"
	mutatePath   = "/mutate-whtest-opgen-dev-v1-gizmo"
)

func TestValidateAnswers(t *testing.T) {
	op, h := registeredHandler(t)

	resp := admit(t, h, validatePath, admissionReview(admissionv1.Create, gizmo(3, "red"), nil))
	assert.True(t, resp.Allowed)
	assert.Empty(t, resp.Warnings)

	resp = admit(t, h, validatePath, admissionReview(admissionv1.Create, gizmo(7, "red"), nil))
	assert.True(t, resp.Allowed)
	assert.Equal(t, []string{"spec.size above 5 is slow"}, resp.Warnings, "warnings pass through")

	resp = admit(t, h, validatePath, admissionReview(admissionv1.Create, gizmo(11, "forbidden"), nil))
	assert.False(t, resp.Allowed)
	assert.EqualValues(t, http.StatusUnprocessableEntity, resp.Result.Code, "a field.ErrorList keeps its status")
	assert.Equal(t, metav1.StatusReasonInvalid, resp.Result.Reason)
	assert.Contains(t, resp.Result.Message, "spec.size: Invalid value: 11: must be at most 10")
	assert.Contains(t, resp.Result.Message, `spec.color: Unsupported value: "forbidden"`)
	assert.Equal(t, []string{"spec.size above 5 is slow"}, resp.Warnings, "warnings of a rejection pass through too")
	if assert.NotNil(t, resp.Result.Details) {
		assert.Len(t, resp.Result.Details.Causes, 2)
	}

	resp = admit(t, h, validatePath, admissionReview(admissionv1.Update, gizmo(1, "red"), gizmo(1, "blue")))
	assert.False(t, resp.Allowed)
	assert.EqualValues(t, http.StatusForbidden, resp.Result.Code, "a plain error is a 403")
	assert.Equal(t, `spec.color is immutable (was "blue")`, resp.Result.Message)

	protected := gizmo(1, "red")
	protected.Labels = map[string]string{"protected": "true"}
	resp = admit(t, h, validatePath, admissionReview(admissionv1.Delete, nil, protected))
	assert.False(t, resp.Allowed)
	assert.EqualValues(t, http.StatusForbidden, resp.Result.Code)
	assert.Contains(t, resp.Result.Message, "the gizmo is protected")
	assert.True(t, admit(t, h, validatePath, admissionReview(admissionv1.Delete, nil, gizmo(1, "red"))).Allowed)

	resp = admit(t, h, validatePath, admissionReview(admissionv1.Create, gizmo(1, "panic"), nil))
	assert.False(t, resp.Allowed, "a panic rejects")
	assert.EqualValues(t, http.StatusInternalServerError, resp.Result.Code)
	assert.Contains(t, resp.Result.Message, "webhook vgizmo.whtest.opgen.dev panicked: validating a panic-colored gizmo")

	bad := admissionReview(admissionv1.Create, nil, nil)
	bad.Request.Object.Raw = []byte(`{"spec":{"size":"big"}}`)
	resp = admit(t, h, validatePath, bad)
	assert.False(t, resp.Allowed)
	assert.EqualValues(t, http.StatusBadRequest, resp.Result.Code)
	assert.Contains(t, resp.Result.Message, "decode the request's object as *webhook_test.Gizmo")

	rec := post(t, h, validatePath, map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"})
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "the AdmissionReview has no request")

	name := "vgizmo.whtest.opgen.dev"
	reg := op.Registry()
	assert.InDelta(t, 3, metricValue(t, reg, "opgen_webhook_requests_total", "webhook", name, "result", "allowed"), 0)
	assert.InDelta(t, 3, metricValue(t, reg, "opgen_webhook_requests_total", "webhook", name, "result", "rejected"), 0)
	assert.InDelta(t, 3, metricValue(t, reg, "opgen_webhook_requests_total", "webhook", name, "result", "error"), 0)
	assert.InDelta(t, 1, metricValue(t, reg, "opgen_webhook_rejections_total", "webhook", name, "operation", "CREATE", "code", "422"), 0)
	assert.InDelta(t, 9, metricValue(t, reg, "opgen_webhook_request_duration_seconds", "webhook", name), 0, "every request is timed")
}

func TestDefaultPatches(t *testing.T) {
	_, h := registeredHandler(t)
	resp := admit(t, h, mutatePath, admissionReview(admissionv1.Create, gizmo(1, ""), nil))
	require.True(t, resp.Allowed)
	require.NotNil(t, resp.PatchType)
	assert.Equal(t, admissionv1.PatchTypeJSONPatch, *resp.PatchType)
	var ops []map[string]any
	require.NoError(t, json.Unmarshal(resp.Patch, &ops))
	assert.Contains(t, ops, map[string]any{"op": "add", "path": "/spec/color", "value": "blue"})
	assert.Contains(t, ops, map[string]any{"op": "add", "path": "/spec/state", "value": "Open"})

	set := gizmo(1, "red")
	set.Spec.State = "Done"
	resp = admit(t, h, mutatePath, admissionReview(admissionv1.Update, set, gizmo(1, "red")))
	require.True(t, resp.Allowed)
	assert.NotContains(t, string(resp.Patch), "/spec/", "nothing to default, no spec operation")

	resp = admit(t, h, mutatePath, admissionReview(admissionv1.Create, gizmo(1, "panic-default"), nil))
	assert.False(t, resp.Allowed)
	assert.Contains(t, resp.Result.Message, "webhook mgizmo.whtest.opgen.dev panicked: defaulting a panic-colored gizmo")
}

func conversionReview(desired string, objs ...any) *apiextensionsv1.ConversionReview {
	req := &apiextensionsv1.ConversionRequest{UID: "conv-1", DesiredAPIVersion: desired}
	for _, o := range objs {
		data, _ := json.Marshal(o)
		req.Objects = append(req.Objects, k8sruntime.RawExtension{Raw: data})
	}
	return &apiextensionsv1.ConversionReview{TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"}, Request: req}
}

func convert(t *testing.T, h http.Handler, review *apiextensionsv1.ConversionReview) *apiextensionsv1.ConversionResponse {
	t.Helper()
	rec := post(t, h, webhook.ConvertPath, review)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var out apiextensionsv1.ConversionReview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	require.NotNil(t, out.Response)
	assert.Equal(t, review.Request.UID, out.Response.UID)
	return out.Response
}

func TestConvertThroughTheHub(t *testing.T) {
	_, h := registeredHandler(t)
	alpha := &GizmoAlpha{
		TypeMeta:   metav1.TypeMeta{APIVersion: gizmoV1alpha1.String(), Kind: "Gizmo"},
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Labels: map[string]string{"x": "y"}, ResourceVersion: "7"},
		Spec:       GizmoAlphaSpec{Size: 2, Color: "red", Done: true, Tags: []string{"t1", "t2"}},
	}
	hub := gizmo(4, "blue")
	hub.Spec.State = "Open"
	resp := convert(t, h, conversionReview(gizmoV1.String(), alpha, hub))
	require.Equal(t, metav1.StatusSuccess, resp.Result.Status, resp.Result.Message)
	require.Len(t, resp.ConvertedObjects, 2, "a list converts in one request")
	var got Gizmo
	require.NoError(t, json.Unmarshal(resp.ConvertedObjects[0].Raw, &got))
	assert.Equal(t, gizmoV1.String(), got.APIVersion)
	assert.Equal(t, "Gizmo", got.Kind)
	assert.Equal(t, GizmoSpec{Size: 2, Color: "red", State: "Done", Tags: []string{"t1", "t2"}}, got.Spec)
	assert.Equal(t, "7", got.ResourceVersion, "metadata is kept")
	assert.Equal(t, map[string]string{"x": "y"}, got.Labels)
	assert.JSONEq(t, mustJSON(hub), string(resp.ConvertedObjects[1].Raw), "an object in the desired version is passed as it is")

	resp = convert(t, h, conversionReview(gizmoV1alpha1.String(), &got))
	require.Equal(t, metav1.StatusSuccess, resp.Result.Status, resp.Result.Message)
	var back GizmoAlpha
	require.NoError(t, json.Unmarshal(resp.ConvertedObjects[0].Raw, &back))
	assert.Equal(t, alpha, &back, "v1alpha1 → v1 → v1alpha1 loses nothing")

	panics := gizmo(1, "panic")
	resp = convert(t, h, conversionReview(gizmoV1alpha1.String(), hub, panics))
	assert.Equal(t, metav1.StatusFailure, resp.Result.Status)
	assert.Contains(t, resp.Result.Message, "a conversion function panicked")
	assert.Empty(t, resp.ConvertedObjects)

	other := map[string]any{"apiVersion": "other.dev/v1", "kind": "Thing"}
	resp = convert(t, h, conversionReview("other.dev/v2", other))
	assert.Equal(t, metav1.StatusFailure, resp.Result.Status)
	assert.Contains(t, resp.Result.Message, "object 1 of 1: the operator converts no Thing.other.dev")
}

func TestRegistrationErrors(t *testing.T) {
	op := offlineOperator(t)
	require.NoError(t, webhook.Validate(op, gizmoKind, gizmoWebhook{}))
	err := webhook.Validate(op, gizmoKind, gizmoWebhook{})
	assert.ErrorContains(t, err, "registered twice")
	assert.ErrorContains(t, webhook.Default(op, runtime.Kind[*Gizmo]{}, gizmoWebhook{}), "pass the generated <Kind>Kind")
	assert.ErrorContains(t, webhook.Convert(op, k8sruntime.NewScheme(), gizmoHub, "gizmos"), "the scheme does not know the hub whtest.opgen.dev/v1, Kind=Gizmo")
	require.NoError(t, webhook.Convert(op, gizmoScheme(), gizmoHub, "gizmos"))
	assert.ErrorContains(t, webhook.Convert(op, gizmoScheme(), gizmoHub, "gizmos"), "registered twice")
	assert.True(t, strings.HasPrefix(webhook.ConvertPath, "/"))
}

// metricValue is the value of a counter, or the sample count of a
// histogram, of the series with the labels (name, value pairs).
func metricValue(t *testing.T, reg prometheus.Gatherer, metric string, labels ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != metric {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue series
				}
			}
			if h := m.GetHistogram(); h != nil {
				return float64(h.GetSampleCount())
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

func mustJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(data)
}
