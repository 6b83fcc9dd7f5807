package runtime_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/preview"
	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// defaultsGroup serves the test Gadget in a group of its own, whose CRD
// TestPreviewOfACRDDefault changes.
const defaultsGroup = "defaults.test.opgen.dev"

var defaultsScheme = kruntime.NewScheme()

func init() {
	gv := schema.GroupVersion{Group: defaultsGroup, Version: "v1"}
	defaultsScheme.AddKnownTypes(gv, &testapi.Gadget{}, &testapi.GadgetList{})
	metav1.AddToGroupVersion(defaultsScheme, gv)
}

// defaultsCRD is the test Gadget's CRD in defaultsGroup, with message as
// spec.message's default ("" for none).
func defaultsCRD(t *testing.T, message string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crds, err := testenv.ReadCRDs(filepath.Join("..", "..", "test", "testkit", "testapi", "crd"))
	require.NoError(t, err)
	crd := crds[0].DeepCopy()
	crd.Name, crd.Spec.Group = "gadgets."+defaultsGroup, defaultsGroup
	if message != "" {
		spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		field := spec.Properties["message"]
		field.Default = &apiextensionsv1.JSON{Raw: []byte(fmt.Sprintf("%q", message))}
		spec.Properties["message"] = field
		crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	}
	return crd
}

func defaultsClient(t testing.TB, cfg *rest.Config, ns string) *gentype.ClientWithList[*testapi.Gadget, *testapi.GadgetList] {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &schema.GroupVersion{Group: defaultsGroup, Version: "v1"}
	c.APIPath = "/apis"
	c.NegotiatedSerializer = serializer.NewCodecFactory(defaultsScheme).WithoutConversion()
	rc, err := rest.RESTClientFor(c)
	require.NoError(t, err)
	return gentype.NewClientWithList[*testapi.Gadget, *testapi.GadgetList]("gadgets", rc, kruntime.NewParameterCodec(defaultsScheme), ns,
		func() *testapi.Gadget { return &testapi.Gadget{} }, func() *testapi.GadgetList { return &testapi.GadgetList{} })
}

// defaultsKind is the runtime.Kind of the Gadgets of defaultsGroup, on
// clients built from the operator's RESTConfig.
func defaultsKind(t testing.TB, op *runtime.Operator) runtime.Kind[*testapi.Gadget] {
	return runtime.Kind[*testapi.Gadget]{
		GVK: schema.GroupVersionKind{Group: defaultsGroup, Version: "v1", Kind: "Gadget"}, Resource: "gadgets", Namespaced: true,
		ListWatch: func(ns string) *cache.ListWatch {
			c := defaultsClient(t, op.RESTConfig(), ns)
			return &cache.ListWatch{
				ListWithContextFunc:  func(ctx context.Context, o metav1.ListOptions) (kruntime.Object, error) { return c.List(ctx, o) },
				WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return c.Watch(ctx, o) },
			}
		},
		Client: func(ns string) plug.Client[*testapi.Gadget] { return defaultsClient(t, op.RESTConfig(), ns) },
	}
}

// TestPreviewOfACRDDefault: an upgrade that gives spec.message a default
// in the CRD. Objects stored without one read with the default, and the
// handler, which copies it into its ConfigMap, would change every
// ConfigMap: the preview reports exactly what a run then changes.
func TestPreviewOfACRDDefault(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	require.NoError(t, env.ApplyCRDs(ctx, defaultsCRD(t, "")))
	ns := env.Namespace(t)
	const n = 10
	for i := range n {
		_, err := defaultsClient(t, env.Config, ns).Create(ctx, &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("g-%03d", i)}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	gadgets := "/apis/" + defaultsGroup + "/v1/namespaces/" + ns + "/gadgets"
	run := func() {
		h := newOperator(t, ns, nil, runtime.Options{})
		_, err := runtime.Register(h.op, defaultsKind(t, h.op), plug.Handler[*testapi.Gadget](&deleter{handler{calls: &calls{}, fn: upgrade(1)}}), ownsConfigMaps)
		require.NoError(t, err)
		h.start()
		eventually(t, "every ConfigMap to hold the message the Gadget reads with", func() bool {
			objs := storedAt(t, ns, gadgets)
			for i := range n {
				name := fmt.Sprintf("g-%03d", i)
				g, cm := objs["gadgets/"+name], objs["configmaps/"+name+"-cm"]
				if g == nil || cm == nil || field(g, "status", "phase") != "Ready" || text(field(cm, "data", "message")) != text(field(g, "spec", "message")) {
					return false
				}
			}
			return true
		})
		require.NoError(t, h.stop())
	}
	run()
	before := storedAt(t, ns, gadgets)
	require.Nil(t, field(before["gadgets/g-000"], "spec", "message"), "no default yet")

	require.NoError(t, env.ApplyCRDs(ctx, defaultsCRD(t, "defaulted")))
	eventually(t, "the API server to read the Gadgets with the default", func() bool {
		return field(storedAt(t, ns, gadgets)["gadgets/g-000"], "spec", "message") == "defaulted"
	})
	before = storedAt(t, ns, gadgets)
	r, err := runPreviewOf(t, ns, func(op *runtime.Operator) runtime.Kind[*testapi.Gadget] { return defaultsKind(t, op) }, same(upgrade(1)))
	t.Logf("the report:\n%s", report(r))
	require.ErrorIs(t, err, runtime.ErrPreviewChanges)
	assert.Equal(t, fmt.Sprintf("%d objects would change, %d writes, 0 events", n, n), r.Summary.Text, "every ConfigMap")
	assert.Equal(t, versions(before), versions(storedAt(t, ns, gadgets)), "the preview stored nothing")

	run()
	var real []preview.Object
	for key, obj := range storedAt(t, ns, gadgets) {
		if fields := preview.Diff(before[key], obj); len(fields) > 0 && key[:7] != "events/" {
			real = append(real, preview.Object{Kind: field(obj, "kind").(string), Namespace: ns, Name: field(obj, "metadata", "name").(string), Fields: fields})
		}
	}
	assert.ElementsMatch(t, real, reported(r), "the preview reports the fields a run then changed, with their values")
}

func text(v any) string {
	s, _ := v.(string)
	return s
}
