package runtime_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	sigsjson "sigs.k8s.io/json"

	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestOwnWriteEventIsWhatTheWriteReturned: the API server's watch event
// of a write carries the object the write returned, field for field. The
// operator's watch decoder relies on it: for the event of its own write it
// hands over a copy of what the write returned instead of decoding the
// event again. The events here come through client-go's dynamic client,
// which knows nothing of that.
func TestOwnWriteEventIsWhatTheWriteReturned(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	g := createGadget(t, ns, "a", testapi.GadgetSpec{})
	cfg := rest.CopyConfig(env.Config)
	hc, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	cs, err := testapi.NewForConfigAndClient(cfg, hc)
	require.NoError(t, err)
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := dyn.Resource(schema.GroupVersionResource{Group: testapi.GVK.Group, Version: testapi.GVK.Version, Resource: "gadgets"}).
		Namespace(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: g.ResourceVersion})
	require.NoError(t, err)
	defer w.Stop()

	client := testapi.Kind(cs).Client(ns)
	force := true
	status, err := client.Patch(ctx, "a", types.ApplyPatchType,
		[]byte(`{"apiVersion":"`+testapi.GVK.GroupVersion().String()+`","kind":"Gadget","metadata":{"name":"a"},"status":{"phase":"Ready","count":2}}`),
		metav1.PatchOptions{FieldManager: "test-operator", Force: &force}, "status")
	require.NoError(t, err)
	labelled, err := client.Patch(ctx, "a", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"},"finalizers":["x.example.com/f"]}}`), metav1.PatchOptions{})
	require.NoError(t, err)

	for _, wrote := range []*testapi.Gadget{status, labelled} {
		var ev watch.Event
		select {
		case ev = <-w.ResultChan():
		case <-ctx.Done():
			t.Fatal("waiting for the watch event of a write: none within 30s")
		}
		require.Equal(t, watch.Modified, ev.Type)
		raw, err := json.Marshal(ev.Object)
		require.NoError(t, err)
		got := &testapi.Gadget{}
		require.NoError(t, sigsjson.UnmarshalCaseSensitivePreserveInts(raw, got))
		got.TypeMeta = metav1.TypeMeta{}
		assert.Equal(t, wrote, got)
	}
}
