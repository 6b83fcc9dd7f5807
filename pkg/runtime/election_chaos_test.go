package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// faults is what the randomized election test does to one replica's
// connection to the API server.
type faults struct {
	dead        atomic.Bool  // every request fails at once: the process crashed
	pausedUntil atomic.Int64 // unix nanos: requests hang until then, then fail
}

func (f *faults) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if f.dead.Load() {
			return nil, errors.New("injected: replica is dead")
		}
		if until := time.Unix(0, f.pausedUntil.Load()); time.Now().Before(until) {
			t := time.NewTimer(time.Until(until))
			defer t.Stop()
			select {
			case <-t.C:
			case <-r.Context().Done():
			}
			return nil, errors.New("injected: network paused")
		}
		return rt.RoundTrip(r)
	})
}

// TestElectionNeverOverlaps runs five replicas of the in-house elector on
// one Lease of the real API server, and for a while at random kills
// replicas (their requests fail and they stop acting at once; a new
// replica replaces them), shuts them down gracefully, and pauses their
// network for longer than the lease (they keep acting until their renewal
// deadline passes). A detector counts every moment two replicas act as
// leader: it must stay zero, and leadership must change hands.
func TestElectionNeverOverlaps(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	const replicas, minTerms = 5, 3
	duration := 20 * time.Second
	if testing.Short() {
		duration = 8 * time.Second
	}
	// RetryPeriod + RenewDeadline < LeaseDuration, with margin for a
	// loaded machine: a leader whose renewals fail stops before a standby
	// may take over.
	opts := runtime.LeaderElectionOptions{Namespace: ns, LeaseName: "chaos", LeaseDuration: 2 * time.Second, RenewDeadline: 900 * time.Millisecond, RetryPeriod: 150 * time.Millisecond}

	var (
		acting     atomic.Int32
		overlaps   atomic.Int32
		terms      atomic.Int32
		kills      atomic.Int32
		pauses     atomic.Int32
		graceful   atomic.Int32
		generation atomic.Int32
		wg         sync.WaitGroup
		mu         sync.Mutex
		running    = map[int]*struct {
			f      *faults
			cancel context.CancelFunc
		}{}
		rng = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	)
	start := func() {
		id := int(generation.Add(1))
		f := &faults{}
		cfg := rest.CopyConfig(env.Config)
		cfg.Wrap(f.wrap)
		cs, err := kubernetes.NewForConfig(cfg)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		mu.Lock()
		running[id] = &struct {
			f      *faults
			cancel context.CancelFunc
		}{f, cancel}
		mu.Unlock()
		o := opts
		o.Identity = fmt.Sprint("replica-", id)
		wg.Go(func() {
			for ctx.Err() == nil && !f.dead.Load() {
				_ = runtime.Campaign(ctx, cs.CoordinationV1(), o, logr.Discard(), func(leadCtx context.Context) bool {
					terms.Add(1)
					if acting.Add(1) > 1 {
						overlaps.Add(1)
						t.Errorf("%s started leading while another replica acted", o.Identity)
					}
					defer acting.Add(-1)
					for leadCtx.Err() == nil && !f.dead.Load() {
						if acting.Load() > 1 {
							overlaps.Add(1)
						}
						time.Sleep(time.Millisecond) // "work"
					}
					return true
				})
			}
		})
	}
	for range replicas {
		start()
	}
	// The faults hit a random replica, the leader only sometimes: on a
	// loaded machine the set time may see few handovers, so the chaos goes
	// on (up to two minutes) until leadership changed hands several times.
	deadline, limit := time.Now().Add(duration), time.Now().Add(2*time.Minute)
	extended := false
	for now := time.Now(); now.Before(deadline) || (terms.Load() <= minTerms && now.Before(limit)); now = time.Now() {
		if !now.Before(deadline) && !extended {
			extended = true
			t.Logf("after %s only %d terms: going on for up to 2 minutes until there are more than %d", duration, terms.Load(), minTerms)
		}
		time.Sleep(time.Duration(200+rng.IntN(600)) * time.Millisecond)
		mu.Lock()
		ids := make([]int, 0, len(running))
		for id := range running {
			ids = append(ids, id)
		}
		id := ids[rng.IntN(len(ids))]
		r := running[id]
		mu.Unlock()
		switch rng.IntN(3) {
		case 0: // kill -9: stops acting and talking at once, never releases
			r.f.dead.Store(true)
			r.cancel()
			mu.Lock()
			delete(running, id)
			mu.Unlock()
			kills.Add(1)
			start()
		case 1: // SIGTERM: drains and releases
			r.cancel()
			mu.Lock()
			delete(running, id)
			mu.Unlock()
			graceful.Add(1)
			start()
		case 2: // network pause longer than the lease
			r.f.pausedUntil.Store(time.Now().Add(opts.LeaseDuration + time.Duration(rng.IntN(1000))*time.Millisecond).UnixNano())
			pauses.Add(1)
		}
	}
	mu.Lock()
	for _, r := range running {
		r.cancel()
	}
	mu.Unlock()
	wg.Wait()
	t.Logf("election chaos: %d replicas, %v: %d terms, %d kills, %d graceful stops, %d network pauses, %d overlaps",
		replicas, duration, terms.Load(), kills.Load(), graceful.Load(), pauses.Load(), overlaps.Load())
	assert.Zero(t, overlaps.Load(), "two replicas acted as leader at once")
	assert.Greater(t, terms.Load(), int32(minTerms), "leadership should have changed hands several times")
}
