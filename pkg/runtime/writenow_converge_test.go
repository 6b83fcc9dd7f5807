package runtime_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// oneStep is a handler as a new user writes it: it lists its children
// first, makes one step toward spec.size with CreateNow or DeleteNow, and
// writes the status from the list it read, which its own write has just
// made stale. It also lists them again after the write, and counts in
// stale the lists that did not show it.
func oneStep(configMaps *runtime.Reader[*corev1.ConfigMap], stale *atomic.Int32) func(context.Context, *plug.Action[*testapi.Gadget]) error {
	return func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
		children, err := configMaps.Owned(a.Object)
		if err != nil {
			return err
		}
		want := len(children)
		switch n := int32(len(children)); {
		case n < a.Object.Spec.Size:
			want++
			_, err = plug.CreateNow(ctx, a, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Name: a.Object.Name + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)}})
		case n > a.Object.Spec.Size:
			want--
			err = plug.DeleteNow(ctx, a, children[0], "")
		}
		if again, _ := configMaps.Owned(a.Object); len(again) != want {
			stale.Add(1)
		}
		a.Object.Status.Count = int32(len(children))
		return err
	}
}

// TestOwnChildOperationsConverge: after an action whose CreateNow or
// DeleteNow changed the set of its children, the object is handled once
// more at once, and the readers show the action's own writes, so a status
// computed from the children before the write converges without an
// unrelated event; the steady state that follows writes nothing. A list
// right after the write, in the same action, shows it.
func TestOwnChildOperationsConverge(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	configMaps := runtime.Read[*corev1.ConfigMap](h.op, configMapGVK, "configmaps", true,
		func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().ConfigMaps().Informer()
		})
	c := &calls{}
	var stale atomic.Int32
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c, fn: oneStep(configMaps, &stale)}),
		runtime.ControllerOptions[*testapi.Gadget]{Owns: []schema.GroupVersionKind{configMapGVK}, Retain: []schema.GroupVersionKind{configMapGVK}}))
	h.start()
	converged := func(size int32) {
		t.Helper()
		eventually(t, fmt.Sprintf("%d children and a status that counts them", size), func() bool {
			g, err := getGadget(t, ns, "g")
			return err == nil && g.Status.Count == size && len(listConfigMaps(t, ns)) == int(size)
		})
	}
	createGadget(t, ns, "g", testapi.GadgetSpec{Size: 3})
	converged(3)
	assert.Len(t, c.of("g"), 4, "Add and one action after each of its three creations, no more")

	writes, actions := len(h.writes.all()), len(c.of("g"))
	patchGadget(t, ns, "g", `{"spec":{"size":1}}`)
	converged(1)
	assert.Len(t, c.of("g"), actions+3, "Modify and one action after each of its two deletions, no more")

	writes, actions = len(h.writes.all())-writes, len(c.of("g"))
	assert.Equal(t, 2+3, writes, "two deletes and three status writes (the Modify's count is stale, the next two fix it)")
	writes = len(h.writes.all())
	time.Sleep(2 * time.Second) // the steady state: a follow-up would come within milliseconds
	assert.Len(t, c.of("g"), actions, "no action in the steady state")
	assert.Equal(t, writes, len(h.writes.all()), "no write in the steady state: %v", h.writes.all()[writes:])
	assert.Zero(t, stale.Load(), "a list right after CreateNow or DeleteNow shows the write")
}
