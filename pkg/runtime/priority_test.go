package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestUserChangesGoFirst: a change someone makes while the operator works
// through the initial list of its objects after a start is handled before
// that backlog, not behind it.
func TestUserChangesGoFirst(t *testing.T) {
	t.Parallel()
	userChangeFirst(t, false)
}

// TestARetriedUserChangeKeepsItsLane: the change's first action fails;
// its retry goes ahead of the backlog too, not behind it.
func TestARetriedUserChangeKeepsItsLane(t *testing.T) {
	t.Parallel()
	userChangeFirst(t, true)
}

func userChangeFirst(t *testing.T, failOnce bool) {
	const n = 150
	ns := env.Namespace(t)
	for i := range n {
		createGadget(t, ns, fmt.Sprintf("g%03d", i), testapi.GadgetSpec{})
	}
	var (
		mu      sync.Mutex
		handled []string
		failed  bool
	)
	slow := func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
		mu.Lock()
		if failOnce && !failed && a.Object.Name == "g149" && a.Object.Generation == 2 {
			failed = true
			mu.Unlock()
			return fmt.Errorf("the first action on the change fails")
		}
		handled = append(handled, fmt.Sprintf("%s/%d", a.Object.Name, a.Object.Generation))
		mu.Unlock()
		time.Sleep(10 * time.Millisecond) // 150 objects: a backlog of 1.5s or more
		return nil
	}
	h := newOperator(t, ns, nil, runtime.Options{})
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}, fn: slow}),
		runtime.ControllerOptions[*testapi.Gadget]{Workers: 1}))
	h.start()
	eventually(t, "the backlog to be under way", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(handled) >= 5
	})
	patchGadget(t, ns, "g149", `{"spec":{"message":"changed"}}`)
	eventually(t, "the change to be handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, x := range handled {
			if x == "g149/2" {
				return true
			}
		}
		return false
	})
	mu.Lock()
	defer mu.Unlock()
	assert.Less(t, len(handled), n/2, "the change waited behind %d of %d objects of the initial list", len(handled), n)
}

// TestWorkStartsOnceEveryHandlerTookTheList: the workers start once each
// event handler took every object of its informer's initial list, not as
// soon as the informers' stores filled, so a change made as the work
// starts is not behind the rest of the list in a handler's buffer. A slow
// Watch Map keeps its handler a second behind its store here.
func TestWorkStartsOnceEveryHandlerTookTheList(t *testing.T) {
	t.Parallel()
	const secrets = 100
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	kube := h.op.Clientset().CoreV1().Secrets(ns)
	for i := range secrets {
		_, err := kube.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%03d", i)}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	createGadget(t, ns, "g", testapi.GadgetSpec{})
	var mapped atomic.Int64
	atFirst := make(chan int64, 1)
	first := func(context.Context, *plug.Action[*testapi.Gadget]) error {
		select {
		case atFirst <- mapped.Load():
		default:
		}
		return nil
	}
	_, err := runtime.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}, fn: first}), runtime.ControllerOptions[*testapi.Gadget]{
		Watches: []runtime.Watch{{Kind: corev1.SchemeGroupVersion.WithKind("Secret"), Map: func(metav1.Object) []cache.ObjectName {
			time.Sleep(10 * time.Millisecond)
			mapped.Add(1)
			return nil
		}}},
	})
	require.NoError(t, err)
	h.start()
	select {
	case n := <-atFirst:
		assert.GreaterOrEqual(t, n, int64(secrets), "the first action ran with %d of the %d Secrets mapped", n, secrets)
	case <-time.After(30 * time.Second):
		t.Fatal("no action within 30s of the start")
	}
}
