package runtime_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/internal/runtimehooks"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// slowWatches delays every read of a watch's body by d: the operator's
// caches lag behind the API server by at least d.
func slowWatches(d time.Duration) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && r.URL.Query().Get("watch") == "true" {
				resp.Body = slowBody{resp.Body, d}
			}
			return resp, err
		})
	}
}

type slowBody struct {
	io.ReadCloser
	d time.Duration
}

func (b slowBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	time.Sleep(b.d)
	return n, err
}

// TestSeen: Operator.Seen tells when the caches hold a write someone else
// made (a create, a delete) at the version the write returned; a write to
// a kind the operator does not cache is seen at once.
func TestSeen(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	cfg := rest.CopyConfig(env.Config)
	const lag = 500 * time.Millisecond
	cfg.Wrap(slowWatches(lag))
	h := newOperator(t, ns, cfg, runtime.Options{})
	runtime.Read[*corev1.ConfigMap](h.op, configMapGVK, "configmaps", true,
		func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().ConfigMaps().Informer()
		})
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}}), runtime.ControllerOptions[*testapi.Gadget]{}))
	h.start()
	gadgets := schema.GroupResource{Group: testapi.GVK.Group, Resource: "gadgets"}
	configMaps := schema.GroupResource{Resource: "configmaps"}

	g := createGadget(t, ns, "g", testapi.GadgetSpec{})
	start := time.Now()
	assert.False(t, seen(h.op, gadgets, g), "the cache lags %s behind", lag)
	eventually(t, "the create seen", func() bool { return seen(h.op, gadgets, g) })
	assert.GreaterOrEqual(t, time.Since(start), lag/2, "not before the cache had it")

	ctx := context.Background()
	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	eventually(t, "the ConfigMap seen", func() bool { return seen(h.op, configMaps, created) })
	require.NoError(t, cms.Delete(ctx, "c", metav1.DeleteOptions{}))
	deleted := &metav1.ObjectMeta{Namespace: ns, Name: "c", UID: created.UID} // a delete answers with a Status
	assert.False(t, seen(h.op, configMaps, deleted), "the cache still holds it")
	eventually(t, "the delete seen", func() bool { return seen(h.op, configMaps, deleted) })

	secret := &metav1.ObjectMeta{Namespace: ns, Name: "s", ResourceVersion: "1"}
	assert.True(t, seen(h.op, schema.GroupResource{Resource: "secrets"}, secret), "the operator caches no Secrets")
}

// seen asks the operator as the test kit does.
func seen(op *runtime.Operator, gr schema.GroupResource, obj metav1.Object) bool {
	return runtimehooks.Of[*runtime.Operator]().Seen(op, gr, obj)
}
