package outage

import (
	"context"
	"io"
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

// slowBody is a watch's body: it ends after d, or with its request's
// context.
type slowBody struct {
	ctx  context.Context
	done <-chan time.Time
}

func (b slowBody) Read([]byte) (int, error) {
	select {
	case <-b.done:
		return 0, io.EOF
	case <-b.ctx.Done():
		return 0, b.ctx.Err()
	}
}

func (slowBody) Close() error { return nil }

// TestClientTimeoutBoundsRequestsOnly: the client's Timeout (rest.Config's)
// still bounds an ordinary request, but neither a cache's watch, which
// lasts as long as the server keeps it, nor a cache's wait for the API
// server: with the Timeout ending the wait, the reflector backed off and
// a change made at the server's return waited up to 10 s
// (TestRecoversAtOnceAfterAnOutage).
func TestClientTimeoutBoundsRequestsOnly(t *testing.T) {
	const timeout = 200 * time.Millisecond
	upAt := time.Now().Add(3 * timeout)
	up := func() bool { return time.Now().After(upAt) }
	server := roundTripper(func(r *http.Request) (*http.Response, error) {
		switch {
		case r.URL.Path == "/slow":
			<-r.Context().Done()
			return nil, r.Context().Err()
		case !up():
			return nil, syscall.ECONNREFUSED
		case r.URL.Query().Get("watch") == "true":
			return &http.Response{StatusCode: http.StatusOK, Body: slowBody{r.Context(), time.After(3 * timeout)}}, nil
		}
		return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("{}"))}, nil
	})
	tr := New(func(context.Context) error {
		if up() {
			return nil
		}
		return syscall.ECONNREFUSED
	}, logr.Discard())
	client := tr.Client(&http.Client{Transport: server, Timeout: timeout})
	get := func(ctx context.Context, url string) (time.Duration, error) {
		start := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		if err != nil {
			return time.Since(start), err
		}
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		return time.Since(start), err
	}
	fill := cachefill.Fill(context.Background())

	took, err := get(fill, "https://api.test/api/v1/configmaps")
	require.NoError(t, err, "the list waited for the API server beyond the client's Timeout")
	assert.GreaterOrEqual(t, took, 2*timeout)

	took, err = get(fill, "https://api.test/api/v1/configmaps?watch=true")
	require.NoError(t, err, "the client's Timeout ended a watch")
	assert.GreaterOrEqual(t, took, 3*timeout)

	took, err = get(context.Background(), "https://api.test/slow")
	require.Error(t, err, "an ordinary request outlived the client's Timeout")
	assert.Less(t, took, 10*timeout)
	took, err = get(fill, "https://api.test/slow")
	require.Error(t, err, "a cache's list outlived the client's Timeout")
	assert.Less(t, took, 10*timeout)
}
