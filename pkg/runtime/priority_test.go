package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
