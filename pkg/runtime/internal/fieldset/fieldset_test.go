package fieldset_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/cachefill"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/fieldset"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

var env = testenv.New(testenv.Options{CRDDirs: []string{"../../../../test/testkit/testapi/crd"}})

func TestMain(m *testing.M) { env.Main(m) }

const manager = "fieldset-test"

func obj(apiVersion, kind, ns, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"app": name}, "annotations": map[string]any{"opgen.dev/applied-hash": "x"}}}}
	for k, v := range fields {
		u.Object[k] = v
	}
	return u
}

// The field set the API server records for an apply is the one Of
// computes from the body, for built-in kinds and a custom kind.
func TestOfMatchesTheServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := env.Namespace(t)
	dyn, err := dynamic.NewForConfig(env.Config)
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	schemas := fieldset.NewSchemas(cs.Discovery().OpenAPIV3())
	owner := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "0f1e2d3c-0000-4000-8000-000000000001", "controller": true, "blockOwnerDeletion": true}
	container := map[string]any{"name": "web", "image": "nginx", "ports": []any{map[string]any{"containerPort": int64(80)}}}
	cases := []struct {
		gvr  schema.GroupVersionResource
		body *unstructured.Unstructured
	}{
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
			obj("v1", "ConfigMap", ns, "cm", map[string]any{"data": map[string]any{"a": "1", "b": "2"}})},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
			obj("apps/v1", "Deployment", ns, "web", map[string]any{"spec": map[string]any{
				"replicas": int64(2),
				"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
					"spec": map[string]any{"containers": []any{container}}},
			}})},
		{schema.GroupVersionResource{Version: "v1", Resource: "services"},
			obj("v1", "Service", ns, "web", map[string]any{"spec": map[string]any{
				"selector": map[string]any{"app": "web"},
				"ports":    []any{map[string]any{"port": int64(80), "targetPort": int64(8080)}},
			}})},
		{schema.GroupVersionResource{Group: "test.opgen.dev", Version: "v1", Resource: "gadgets"},
			obj("test.opgen.dev/v1", "Gadget", ns, "g", map[string]any{"spec": map[string]any{"size": int64(3)}})},
	}
	for _, tc := range cases {
		t.Run(tc.body.GetKind(), func(t *testing.T) {
			tc.body.SetOwnerReferences([]metav1.OwnerReference{})
			require.NoError(t, unstructured.SetNestedSlice(tc.body.Object, []any{owner}, "metadata", "ownerReferences"))
			got, err := dyn.Resource(tc.gvr).Namespace(ns).Apply(ctx, tc.body.GetName(), tc.body, metav1.ApplyOptions{FieldManager: manager, Force: true})
			require.NoError(t, err)
			want, err := schemas.Of(tc.body)
			require.NoError(t, err)
			var entry []byte
			for _, e := range got.GetManagedFields() {
				if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply {
					entry = e.FieldsV1.GetRawBytes()
				}
			}
			require.NotNil(t, entry)
			assert.Equal(t, cachefill.FieldsHash(entry), want, "the server recorded %s", entry)
		})
	}
}
