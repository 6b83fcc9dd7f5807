package runtime_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestForeignWriter: another client keeps writing a field the operator
// owns (the data of a declared ConfigMap), 20 times a second. The operator
// reverts each write at most once (no write war: its writes are bounded
// by the foreign ones), and once the writer stops the ConfigMap converges
// and the operator writes nothing more.
func TestForeignWriter(t *testing.T) {
	t.Parallel()
	d := 5 * time.Second
	if chaosFull() {
		d = time.Minute
	}
	ns := env.Namespace(t)
	c := &calls{}
	h := newOperator(t, ns, nil, runtime.Options{})
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: c, fn: configMapAndService}),
		runtime.ControllerOptions[*testapi.Gadget]{Owns: []schema.GroupVersionKind{configMapGVK, serviceGVK}}))
	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{Message: "hello"})
	eventually(t, "the ConfigMap and Service", func() bool { return converged(t, ns) })
	settle(t, c, "g")

	ctx := context.Background()
	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	before := h.writes.count("/configmaps/g")
	foreign := 0
	t.Logf("writing the ConfigMap's data from another client 20 times a second for %s", d)
	tick := time.NewTicker(50 * time.Millisecond)
	for end := time.Now().Add(d); time.Now().Before(end); <-tick.C {
		patch := fmt.Sprintf(`{"data":{"message":"foreign-%d"}}`, foreign)
		_, err := cms.Patch(ctx, "g", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "foreign-writer"})
		require.NoError(t, err)
		foreign++
	}
	tick.Stop()
	eventually(t, "the ConfigMap back as declared after the writer stopped", func() bool { return converged(t, ns) })
	settle(t, c, "g")
	during := h.writes.count("/configmaps/g") - before
	quiet := h.writes.count("/configmaps/g")
	settle(t, c, "g")
	time.Sleep(time.Second) // a steady state: no write in a second
	perMin := func(n int) float64 { return float64(n) / d.Minutes() }
	t.Logf("figures: %d foreign writes (%.0f/min), %d operator writes of the ConfigMap (%.0f/min), %.2f per foreign write",
		foreign, perMin(foreign), during, perMin(during), float64(during)/float64(foreign))
	require.LessOrEqual(t, during, foreign+1, "more writes than the foreign writer's: a write war")
	require.Equal(t, quiet, h.writes.count("/configmaps/g"), "writes after convergence")
}
