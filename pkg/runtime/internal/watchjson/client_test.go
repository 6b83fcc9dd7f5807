package watchjson

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// A server of one ConfigMap, ns/a: GET and PATCH (of the object or its
// status) return it; any other name is a 404 Status. It records the
// requests.
func configMapServer(t *testing.T) (*kubernetes.Clientset, *[]string) {
	t.Helper()
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", ResourceVersion: "7", Labels: map[string]string{"x": "y"}},
		Data:       map[string]string{"k": "v {\"quoted\"}"},
	}
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		seen = append(seen, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Content-Type")+" "+string(body))
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/api/v1/namespaces/ns/configmaps/a" && r.URL.Path != "/api/v1/namespaces/ns/configmaps/a/status" {
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(apierrors.NewNotFound(corev1.Resource("configmaps"), "b").Status())
			return
		}
		_ = json.NewEncoder(w).Encode(cm)
	}))
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	require.NoError(t, err)
	return cs, &seen
}

// TestClientAsClientGo: Get and Patch send the typed client's requests and
// return what it returns, errors included.
func TestClientAsClientGo(t *testing.T) {
	cs, seen := configMapServer(t)
	ctx := context.Background()
	ours := NewClient[*corev1.ConfigMap](cs.CoreV1().RESTClient(), "configmaps", "ns")
	theirs := cs.CoreV1().ConfigMaps("ns")

	got, err := ours.Get(ctx, "a", metav1.GetOptions{ResourceVersion: "7"})
	require.NoError(t, err)
	want, err := theirs.Get(ctx, "a", metav1.GetOptions{ResourceVersion: "7"})
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Empty(t, got.APIVersion, "TypeMeta cleared, as the typed client clears it")

	patch := []byte(`{"data":{"k":"w"}}`)
	opts := metav1.PatchOptions{FieldManager: "m", Force: new(true)}
	got, err = ours.Patch(ctx, "a", types.ApplyPatchType, patch, opts, "status")
	require.NoError(t, err)
	want, err = theirs.Patch(ctx, "a", types.ApplyPatchType, patch, opts, "status")
	require.NoError(t, err)
	assert.Equal(t, want, got)

	_, err = ours.Get(ctx, "b", metav1.GetOptions{})
	_, wantErr := theirs.Get(ctx, "b", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "got %v", err)
	assert.Equal(t, wantErr.Error(), err.Error())

	require.Len(t, *seen, 6)
	for i := 0; i < 6; i += 2 {
		assert.Equal(t, (*seen)[i+1], (*seen)[i], "the typed client's request")
	}
}

// TestOptionsAsParameterCodec: Get and Patch send the query parameters of
// their options that client-go's parameter codec sends, for every field
// of the options.
func TestOptionsAsParameterCodec(t *testing.T) {
	cs, seen := configMapServer(t)
	ctx := context.Background()
	ours := NewClient[*corev1.ConfigMap](cs.CoreV1().RESTClient(), "configmaps", "ns")
	theirs := cs.CoreV1().ConfigMaps("ns")
	for _, opts := range []metav1.PatchOptions{
		{},
		{FieldManager: "m", Force: new(true)},
		{Force: new(false), FieldValidation: "Strict", DryRun: []string{metav1.DryRunAll}},
		{DryRun: []string{"a", "b"}, FieldManager: "with space&amp"},
	} {
		_, err := ours.Patch(ctx, "a", types.MergePatchType, []byte(`{}`), opts)
		require.NoError(t, err)
		_, err = theirs.Patch(ctx, "a", types.MergePatchType, []byte(`{}`), opts)
		require.NoError(t, err)
	}
	for _, opts := range []metav1.GetOptions{{}, {ResourceVersion: "0"}} {
		_, err := ours.Get(ctx, "a", opts)
		require.NoError(t, err)
		_, err = theirs.Get(ctx, "a", opts)
		require.NoError(t, err)
	}
	require.Len(t, *seen, 12)
	for i := 0; i < len(*seen); i += 2 {
		assert.Equal(t, (*seen)[i+1], (*seen)[i], "the typed client's request")
	}
	// A field client-go adds to the options must be added to Get and Patch.
	fields := func(v any) (names []string) {
		for f := range reflect.TypeOf(v).Fields() {
			names = append(names, f.Name)
		}
		return names
	}
	assert.Equal(t, []string{"TypeMeta", "DryRun", "Force", "FieldManager", "FieldValidation"}, fields(metav1.PatchOptions{}))
	assert.Equal(t, []string{"TypeMeta", "ResourceVersion"}, fields(metav1.GetOptions{}))
}

// BenchmarkDecodeObject is the decoding of the object a status write
// returns, 4 KB with managedFields: client-go's decoder (the typed
// client's) against decodeObject.
func BenchmarkDecodeObject(b *testing.B) {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", ResourceVersion: "7", Labels: map[string]string{"app": "bench", "tier": "backend"}},
		Data:       map[string]string{},
	}
	for i := range 40 {
		cm.Data[fmt.Sprintf("key-%02d", i)] = strings.Repeat("v", 40)
	}
	for _, m := range []string{"someone", "opgen"} {
		cm.ManagedFields = append(cm.ManagedFields, metav1.ManagedFieldsEntry{Manager: m, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:key-00":{},"f:key-01":{},"f:key-02":{},"f:key-03":{}}}`)})
	}
	body, err := json.Marshal(cm)
	require.NoError(b, err)
	theirs := runtime.WithoutVersionDecoder{Decoder: scheme.Codecs.UniversalDeserializer()}
	b.Run("client-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := theirs.Decode(body, nil, &corev1.ConfigMap{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("one-pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeObject[*corev1.ConfigMap](body); err != nil {
				b.Fatal(err)
			}
		}
	})
}
