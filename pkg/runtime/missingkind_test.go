package runtime_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// widgetCRD is a namespaced CRD of kind Widget in group, served as v1.
func widgetCRD(group string) *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
}

// TestMissingOwnedKindWaitsForItsCRD: a controller owning a kind the API
// server does not serve does not stop the operator: it says which kind and
// how to fix it, stays not ready, and proceeds once the CRD is installed.
func TestMissingOwnedKindWaitsForItsCRD(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	group := ns + ".opgen.test"
	widgetGVK := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"}
	logs := &logBuffer{}
	h := newOperator(t, ns, nil, runtime.Options{Logger: logs.logger()})
	c := &calls{}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c}),
		runtime.ControllerOptions[*testapi.Gadget]{Owns: []schema.GroupVersionKind{widgetGVK}}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.op.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Error("Run did not return within 60s of cancel")
		}
	})

	eventually(t, "the message naming the missing kind", func() bool {
		return strings.Contains(logs.String(), group+"/v1.Widget is not served")
	})
	assert.Contains(t, logs.String(), "install its CRD")
	select {
	case err := <-done:
		t.Fatalf("Run returned while the owned kind was missing: %v", err)
	default:
	}
	assert.False(t, h.op.Ready(), "ready while an owned kind is not served")

	crds, err := apiextensionsclient.NewForConfig(env.Config)
	require.NoError(t, err)
	require.NoError(t, env.ApplyCRDs(context.Background(), widgetCRD(group)))
	t.Cleanup(func() {
		_ = crds.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), "widgets."+group, metav1.DeleteOptions{})
	})
	// The retry backoff is capped at 30s; allow for one full step.
	deadline := time.Now().Add(45 * time.Second)
	for !h.op.Ready() {
		require.True(t, time.Now().Before(deadline), "not ready 45s after the owned kind's CRD was installed; logs:\n%s", logs.String())
		time.Sleep(50 * time.Millisecond)
	}
	createGadget(t, ns, "g", testapi.GadgetSpec{Message: "hello"})
	eventually(t, "the handler to run for g", func() bool { return len(c.of("g")) > 0 })
}
