package outage

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
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

// TestOutageIsLoggedOncePerWatch: while the API server is unreachable,
// each waiting list or watch (by its path) is logged once every
// outageLogEvery, however many times it probes, and each path on its own.
func TestOutageIsLoggedOncePerWatch(t *testing.T) {
	var lines []string
	log := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{})
	tr := New(func(context.Context) error { return syscall.ECONNREFUSED }, log)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	tr.clock = func() time.Time { return now }
	const todos, configMaps = "/apis/todo.example.com/v1/todos", "/api/v1/configmaps"
	count := func(path string) (n int) {
		for _, l := range lines {
			if strings.Contains(l, `"path"="`+path+`"`) {
				n++
			}
		}
		return n
	}
	for range 4 * int(outageLogEvery/probeEvery) { // two minutes of probes
		tr.report(todos, syscall.ECONNREFUSED)
		tr.report(configMaps, syscall.ECONNREFUSED)
		now = now.Add(probeEvery)
	}
	assert.Equal(t, 4, count(todos), "one line per %v for the Todos' watch", outageLogEvery)
	assert.Equal(t, 4, count(configMaps), "one line per %v for the ConfigMaps' watch", outageLogEvery)
	tr.back()
	tr.report(todos, syscall.ECONNREFUSED)
	assert.Equal(t, 5, count(todos), "a new outage is logged at once")
}
