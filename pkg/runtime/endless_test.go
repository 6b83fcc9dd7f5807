package runtime_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// chaosFull reports whether to run the full form of a fault-injection
// test (make chaos sets OPGEN_CHAOS=full) rather than make test's quick
// one.
func chaosFull() bool { return os.Getenv("OPGEN_CHAOS") == "full" && !testing.Short() }

// TestEndlessErrors: a handler that always fails. Its tries space out by
// the doubling backoff up to the cap and then one per cap, never faster
// (no hot loop); the Warning events it causes reach the API server at a
// bounded rate; and the status is not rewritten on every try. The test
// uses a cap of 1s (the default is 1,000s) so that it is reached quickly.
func TestEndlessErrors(t *testing.T) {
	t.Parallel()
	d := 10 * time.Second
	if chaosFull() {
		d = time.Minute
	}
	const base, capDelay = 5 * time.Millisecond, time.Second
	ns := env.Namespace(t)
	var eventWrites, statusWrites atomic.Int64
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			switch {
			case r.Method == http.MethodGet:
			case strings.Contains(r.URL.Path, "/events"):
				eventWrites.Add(1)
			case strings.HasSuffix(r.URL.Path, "/status"):
				statusWrites.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	h := newOperator(t, ns, cfg, runtime.Options{})
	var mu sync.Mutex
	var tries []time.Time
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&handler{calls: &calls{}, fn: func(context.Context, *plug.Action[*testapi.Gadget]) error {
		mu.Lock()
		tries = append(tries, time.Now())
		mu.Unlock()
		return errors.New("the backend refuses, always")
	}}), runtime.ControllerOptions[*testapi.Gadget]{
		RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](base, capDelay),
	}))
	h.start()
	createGadget(t, ns, "g", testapi.GadgetSpec{})
	t.Logf("letting the handler fail for %s", d)
	time.Sleep(d)
	mu.Lock()
	got := append([]time.Time(nil), tries...)
	mu.Unlock()
	// Tries to reach the cap (5ms doubled 8 times is 1.28s), then at most
	// one per cap for the rest; 2 more for the edges.
	doublings := 0
	for b := base; b < capDelay; b *= 2 {
		doublings++
	}
	bound := doublings + int(d/capDelay) + 2
	var gaps []time.Duration
	for i := 1; i < len(got); i++ {
		gaps = append(gaps, got[i].Sub(got[i-1]))
	}
	perMin := func(n int64) float64 { return float64(n) / d.Minutes() }
	t.Logf("figures: %s of failures: %d tries (bound %d), %.0f Event writes/min, %.0f status writes/min; last gaps %v",
		d, len(got), bound, perMin(eventWrites.Load()), perMin(statusWrites.Load()), gaps[max(0, len(gaps)-3):])
	require.GreaterOrEqual(t, len(got), doublings, "the handler is not retried")
	require.LessOrEqual(t, len(got), bound, "tries faster than the backoff allows: a hot loop")
	for i, g := range gaps[doublings:] {
		require.GreaterOrEqual(t, g, capDelay-50*time.Millisecond, "try %d came %s after the one before, below the cap", doublings+i+1, g)
	}
	// One Event write per try at most, and the events API folds repeats
	// into a series, so fewer.
	require.LessOrEqual(t, eventWrites.Load(), int64(len(got)), "more Event writes than failures")
	require.LessOrEqual(t, statusWrites.Load(), int64(3), "the unchanged Degraded status is written again on each try")
}
