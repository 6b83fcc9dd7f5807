package outage

import (
	"context"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/cachefill"
)

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestProbeGoesStraightThrough: while a cache's list waits for the API
// server, the probe that asks whether it is back is sent once each time,
// through the same client, and never waits in turn.
func TestProbeGoesStraightThrough(t *testing.T) {
	refused := roundTripper(func(*http.Request) (*http.Response, error) { return nil, syscall.ECONNREFUSED })
	var depth, deepest, probes atomic.Int32
	var client *http.Client
	tr := New(func(ctx context.Context) error {
		probes.Add(1)
		d := depth.Add(1)
		defer depth.Add(-1)
		if d > deepest.Load() {
			deepest.Store(d)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://api.test/readyz", nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}, logr.Discard())
	client = tr.Client(&http.Client{Transport: refused})
	ctx, cancel := context.WithTimeout(cachefill.Fill(context.Background()), 800*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://api.test/api/v1/configmaps", nil)
	require.NoError(t, err)
	_, err = client.Do(req)
	require.Error(t, err, "the list fails once its context ends")
	assert.Equal(t, int32(1), deepest.Load(), "a probe waited for the API server in turn")
	assert.GreaterOrEqual(t, probes.Load(), int32(2), "the waiting list probed every %v", probeEvery)
	assert.False(t, tr.Waiting(), "nothing waits any more")
}
