package runtime_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestRepeatedFailuresAreOneEventSeries: an object that fails every try,
// and whose status changes between tries (a new resource version each
// time), has one Warning Event whose series counts the tries, not an
// Event per try.
func TestRepeatedFailuresAreOneEventSeries(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	var tries atomic.Int32
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}, fn: func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
		n := tries.Add(1)
		a.Object.Status.Count = n // written although the action fails: a new version each try
		return fmt.Errorf("the backend refuses, always")
	}}), runtime.ControllerOptions[*testapi.Gadget]{
		RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](20*time.Millisecond, 200*time.Millisecond),
	}))
	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{})
	eventually(t, "eight tries", func() bool { return tries.Load() >= 8 })
	eventually(t, "the Warning Event's series", func() bool {
		list, err := env.Clientset().EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		for _, e := range list.Items {
			if e.Reason == plug.ReasonFailed && e.Series != nil && e.Series.Count >= 2 {
				return true
			}
		}
		return false
	})
	list, err := env.Clientset().EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	failed := 0
	for _, e := range list.Items {
		if e.Reason == plug.ReasonFailed {
			failed++
		}
	}
	assert.Equal(t, 1, failed, "one Event for %d tries, its series counting them", tries.Load())
}
