// Package servertest checks against a real API server what opgen says
// about API upgrades: that a deprecated version's clients get the
// deprecation warning, and that each finding of the compatibility gate
// does to existing objects what its message says, ratcheting included.
// It is a package of its own so that gen/compat's tests need no control
// plane.
package servertest

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/crd"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

var env = testenv.New(testenv.Options{Exclusive: []string{"gadgets.deprecation.opgen.dev"}})

func TestMain(m *testing.M) { env.Main(m) }

// generated returns the CRD that opgen generate writes for the project in
// dir, from its apis/ packages, without writing anything.
func generated(t *testing.T, dir string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	res, err := gen.Run(context.Background(), gen.Options{Root: dir, Patterns: []string{"./apis/..."}, Name: "servertest", DryRun: true, StampDir: "-"},
		map[string]gen.Generator{"crd": crd.Generator{}})
	require.NoError(t, err)
	var out *apiextensionsv1.CustomResourceDefinition
	for path, data := range res.Output.Files() {
		if filepath.Ext(path) == ".yaml" && strings.Contains(path, filepath.Join("config", "crd")) {
			require.Nil(t, out, "one CRD expected in %s", dir)
			out = decodeCRD(t, data)
		}
	}
	require.NotNil(t, out, "no CRD generated in %s", dir)
	return out
}

func decodeCRD(t *testing.T, data []byte) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	_, doc, ok := bytes.Cut(data, []byte("---\n"))
	require.True(t, ok)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, yaml.UnmarshalStrict(doc, crd))
	return crd
}

// warnings collects the warnings the API server sends a client.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

// TestDeprecatedVersionWarns: +kubebuilder:deprecatedversion goes through
// opgen's CRD generation, and the API server then warns every client of
// that version, with the marker's text, and no client of the other.
func TestDeprecatedVersionWarns(t *testing.T) {
	ctx := context.Background()
	crd := generated(t, "testdata/deprecated")
	const warning = "deprecation.opgen.dev/v1alpha1 Gadget is deprecated; use deprecation.opgen.dev/v1"
	require.Len(t, crd.Spec.Versions, 2)
	alpha, v1 := crd.Spec.Versions[1], crd.Spec.Versions[0]
	require.Equal(t, "v1alpha1", alpha.Name)
	require.True(t, alpha.Deprecated)
	require.NotNil(t, alpha.DeprecationWarning)
	assert.Equal(t, warning, *alpha.DeprecationWarning)
	assert.False(t, v1.Deprecated)
	assert.Nil(t, v1.DeprecationWarning)

	require.NoError(t, env.ApplyCRDs(ctx, crd))
	t.Cleanup(func() { deleteCRD(t, crd.Name) })
	seen := &warnings{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandler = seen
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	ns := env.Namespace(t)
	gadgets := func(version string) dynamic.ResourceInterface {
		return dyn.Resource(schema.GroupVersionResource{Group: "deprecation.opgen.dev", Version: version, Resource: "gadgets"}).Namespace(ns)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "deprecation.opgen.dev/v1alpha1", "kind": "Gadget",
		"metadata": map[string]any{"name": "old"}, "spec": map[string]any{"size": int64(1)},
	}}
	_, err = gadgets("v1alpha1").Create(ctx, obj, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{warning}, seen.take(), "a create in v1alpha1")
	_, err = gadgets("v1alpha1").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{warning}, seen.take(), "a list in v1alpha1")
	got, err := gadgets("v1").Get(ctx, "old", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, seen.take(), "clients of v1 get no warning")
	assert.Equal(t, "deprecation.opgen.dev/v1", got.GetAPIVersion())
}

func deleteCRD(t *testing.T, name string) {
	client, err := apiextensionsclient.NewForConfig(env.Config)
	if err == nil {
		err = client.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), name, metav1.DeleteOptions{})
	}
	if err != nil {
		t.Logf("delete CRD %s: %v", name, err)
	}
}
