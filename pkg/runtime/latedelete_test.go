package runtime_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestLateDelete: an object the operator saw but that was deleted before
// its finalizer was on it still gets its Delete, once, with its last
// state. The one worker is held in another object's Add while the second
// object is created and deleted, so the second never gets the finalizer
// (the 20-minute churn soak lost 1 of 5,933 Todos this way under load).
// An object whose Delete ran normally gets no second one from the watch's
// deletion event.
func TestLateDelete(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{Workers: 1, ShutdownTimeout: time.Second})
	release := make(chan struct{})
	entered := make(chan string, 10)
	c := &calls{}
	ctrl, err := runtime.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&deleter{handler{calls: c, fn: func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
		if a.Verb == plug.Add && a.Object.Name == "blocker" {
			entered <- a.Object.Name
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return nil
	}}}), runtime.ControllerOptions[*testapi.Gadget]{})
	require.NoError(t, err)
	h.start()
	createGadget(t, ns, "blocker", testapi.GadgetSpec{})
	require.Equal(t, "blocker", <-entered)
	createGadget(t, ns, "brief", testapi.GadgetSpec{Size: 7})
	eventually(t, "the cache to hold brief", func() bool {
		_, ok := ctrl.Get(cache.ObjectName{Namespace: ns, Name: "brief"})
		return ok
	})
	require.NoError(t, gadgetClient(t, ns).Delete(context.Background(), "brief", metav1.DeleteOptions{}))
	eventually(t, "brief to be gone from the cache", func() bool {
		_, ok := ctrl.Get(cache.ObjectName{Namespace: ns, Name: "brief"})
		return !ok
	})
	require.Empty(t, c.of("brief"), "brief was handled while the only worker was held")
	close(release)
	eventually(t, "the late Delete of brief", func() bool { return slices.Contains(c.verbs("brief"), plug.Delete) })
	last, _ := c.last("brief")
	require.Equal(t, []plug.Verb{plug.Delete}, c.verbs("brief"), "only the Delete: the object is gone")
	require.NotContains(t, last.finalizers, finalizer)

	// The normal path: blocker has its finalizer; its Delete removes it,
	// and the watch's deletion of the object is not a second Delete.
	require.NoError(t, gadgetClient(t, ns).Delete(context.Background(), "blocker", metav1.DeleteOptions{}))
	eventually(t, "blocker to be gone", func() bool {
		_, err := getGadget(t, ns, "blocker")
		return err != nil
	})
	// A marker object queued after blocker's deletion event: once it is
	// handled, a second Delete of blocker would have run before it.
	createGadget(t, ns, "marker", testapi.GadgetSpec{})
	eventually(t, "marker handled", func() bool { return len(c.of("marker")) > 0 })
	n := 0
	for _, v := range c.verbs("blocker") {
		if v == plug.Delete {
			n++
		}
	}
	require.Equal(t, 1, n, "blocker's Delete ran %d times: %v", n, c.verbs("blocker"))
}
