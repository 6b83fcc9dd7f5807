package preflight_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/gen/compat/preflight"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

var env = testenv.New(testenv.Options{Exclusive: []string{"widgets.preflight.opgen.dev"}})

func TestMain(m *testing.M) { env.Main(m) }

func readCRD(t *testing.T, path string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, yaml.UnmarshalStrict(data, crd))
	return crd
}

var widgets = schema.GroupVersionResource{Group: "preflight.opgen.dev", Version: "v1", Resource: "widgets"}

func widget(name, color string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "preflight.opgen.dev/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name, "finalizers": []any{"preflight.opgen.dev/cleanup"}},
		"spec":     map[string]any{"color": color},
	}}
}

// TestPreflight writes three Widgets under the released CRD: one whose
// color the release's enum refuses, one whose name its root rule
// refuses, and one that is fine. The preflight reports the second as
// refused and the first as kept by ratcheting. Then the release's CRD is
// applied to the same API server, which answers as the report said: the
// second cannot even lose its finalizer, the first takes an update and
// refuses a create of its manifest.
func TestPreflight(t *testing.T) {
	ctx := context.Background()
	scratch := testenv.New(testenv.Options{Private: true})
	require.NoError(t, scratch.Start(ctx))
	t.Cleanup(scratch.Stop)
	released, release := readCRD(t, "testdata/released.yaml"), readCRD(t, "testdata/release.yaml")
	require.NoError(t, env.ApplyCRDs(ctx, released))
	dyn, err := dynamic.NewForConfig(env.Config)
	require.NoError(t, err)
	res := dyn.Resource(widgets).Namespace(env.Namespace(t))
	t.Cleanup(func() { cleanUp(t, res, released) })
	for _, w := range []*unstructured.Unstructured{widget("blue", "blue"), widget("long-widget-name", "red"), widget("fine", "green")} {
		_, err := res.Create(ctx, w, metav1.CreateOptions{})
		require.NoError(t, err)
	}

	start := time.Now()
	report, err := preflight.Check(ctx, preflight.Options{Cluster: env.Config, Scratch: scratch.Config, CRDs: []*apiextensionsv1.CustomResourceDefinition{release}})
	require.NoError(t, err)
	t.Logf("preflight of 3 objects: %s", time.Since(start).Round(time.Millisecond))
	require.Len(t, report.Versions, 1)
	v := report.Versions[0]
	assert.Equal(t, 3, v.Objects)
	require.Len(t, v.Refused, 1)
	assert.Equal(t, "long-widget-name", v.Refused[0].Name)
	assert.Contains(t, v.Refused[0].Message, "a Widget's name is at most 10 characters long")
	require.Len(t, v.Ratcheted, 1)
	assert.Equal(t, "blue", v.Ratcheted[0].Name)
	assert.Contains(t, v.Ratcheted[0].Message, `Unsupported value: "blue"`)
	assert.True(t, report.Refused())

	require.NoError(t, env.ApplyCRDs(ctx, release))
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := res.Create(ctx, widget("blue-copy", "blue"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil, nil
	})
	require.NoError(t, err, "the API server did not serve the release's CRD within 30 s")
	assert.Error(t, removeFinalizer(ctx, res, "long-widget-name"), "refused, as the report says")
	assert.NoError(t, removeFinalizer(ctx, res, "blue"), "kept writable by ratcheting, as the report says")
	assert.NoError(t, removeFinalizer(ctx, res, "fine"))
}

func removeFinalizer(ctx context.Context, res dynamic.ResourceInterface, name string) error {
	obj, err := res.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	obj.SetFinalizers(nil)
	_, err = res.Update(ctx, obj, metav1.UpdateOptions{})
	return err
}

// cleanUp puts the released CRD back, so that the finalizers can go, and
// deletes the CRD.
func cleanUp(t *testing.T, res dynamic.ResourceInterface, released *apiextensionsv1.CustomResourceDefinition) {
	ctx := context.Background()
	if err := env.ApplyCRDs(ctx, released); err != nil {
		t.Logf("clean up: %v", err)
	}
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, name := range []string{"blue", "long-widget-name", "fine"} {
			if err := removeFinalizer(ctx, res, name); err != nil && !isNotFound(err) {
				return false, nil
			}
		}
		return true, nil
	})
	client, err := apiextensionsclient.NewForConfig(env.Config)
	if err == nil {
		err = client.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, released.Name, metav1.DeleteOptions{})
	}
	if err != nil {
		t.Logf("clean up: delete CRD: %v", err)
	}
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
