package runtime_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestHandlerReadsItsOwnWrites: a handler that writes (its status, an
// owned ConfigMap) and asks to run again at once sees what it wrote, in
// a.Object and through a Reader, though the cache may not show it yet;
// and its own writes wake nothing.
func TestHandlerReadsItsOwnWrites(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	const rounds = 30
	var (
		mu    sync.Mutex
		stale []string
		seen  []int32
	)
	h := newOperator(t, ns, nil, runtime.Options{})
	configMaps := runtime.Read[*corev1.ConfigMap](h.op, corev1.SchemeGroupVersion.WithKind("ConfigMap"), "configmaps", true,
		func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().ConfigMaps().Informer()
		})
	fn := func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
		n := a.Object.Status.Count
		mu.Lock()
		seen = append(seen, n)
		mu.Unlock()
		if n > 0 {
			cm, err := configMaps.Get(ns, a.Object.Name)
			got := fmt.Sprint(err)
			if err == nil {
				got = cm.Data["count"]
			}
			if got != strconv.Itoa(int(n)) {
				mu.Lock()
				stale = append(stale, fmt.Sprintf("count %d: ConfigMap says %s", n, got))
				mu.Unlock()
			}
		}
		if n < rounds {
			a.Object.Status.Count = n + 1
			a.Own(corev1ac.ConfigMap(a.Object.Name, "").WithData(map[string]string{"count": strconv.Itoa(int(n + 1))}))
			a.RequeueAfter(time.Millisecond)
		}
		return nil
	}
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}, fn: fn}),
		runtime.ControllerOptions[*testapi.Gadget]{Owns: []schema.GroupVersionKind{configMapGVK}}))
	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{})
	eventually(t, "all rounds", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) > 0 && seen[len(seen)-1] == rounds
	})
	time.Sleep(time.Second) // for an extra action the last writes' events would wake
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, rounds, int(seen[len(seen)-1]))
	assert.Equal(t, rounds+1, len(seen), "one action per write: the operator's own writes woke no extra action")
	assert.Empty(t, stale, "the Reader showed an older ConfigMap than the handler wrote")
	for i := 1; i < len(seen); i++ {
		assert.Equal(t, seen[i-1]+1, seen[i], "action %d saw count %d after %d: every action sees the write of the one before", i, seen[i], seen[i-1])
	}
}
