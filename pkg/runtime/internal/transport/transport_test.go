package transport

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/component-base/metrics/testutil"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/cachefill"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/fence"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/observe"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/outage"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/ownwrites"
)

type answer func(*http.Request) (*http.Response, error)

func (f answer) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestProbeGoesStraightThrough: while a cache's list waits for the API
// server, the probe that asks whether it is back is sent once each time,
// through the same client, and never waits in turn.
func TestProbeGoesStraightThrough(t *testing.T) {
	refused := answer(func(*http.Request) (*http.Response, error) { return nil, syscall.ECONNREFUSED })
	var depth, deepest, probes atomic.Int32
	var client *http.Client
	tr := outage.New(func(ctx context.Context) error {
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
	client = Client(&http.Client{Transport: refused}, Layers{Outage: tr})
	ctx, cancel := context.WithTimeout(cachefill.Fill(context.Background()), 800*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://api.test/api/v1/configmaps", nil)
	require.NoError(t, err)
	_, err = client.Do(req)
	require.Error(t, err, "the list fails once its context ends")
	assert.Equal(t, int32(1), deepest.Load(), "a probe waited for the API server in turn")
	assert.GreaterOrEqual(t, probes.Load(), int32(2), "the waiting list probed every 250ms")
	assert.False(t, tr.Waiting(), "nothing waits any more")
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
	server := answer(func(r *http.Request) (*http.Response, error) {
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
	tr := outage.New(func(context.Context) error {
		if up() {
			return nil
		}
		return syscall.ECONNREFUSED
	}, logr.Discard())
	client := Client(&http.Client{Transport: server, Timeout: timeout}, Layers{Outage: tr})
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

// TestLayersInOrder: a write the fence refuses never reaches the server;
// an admitted write's stored resourceVersion is recorded and its body
// still reaches the caller; a 429 is counted; a cache's list is filtered
// and a handler's list of the same objects is not.
func TestLayersInOrder(t *testing.T) {
	t.Parallel()
	var reached []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = append(reached, r.Method+" "+r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/busy":
			w.WriteHeader(http.StatusTooManyRequests)
		case "/list":
			_, _ = io.WriteString(w, `{"kind":"ConfigMapList","items":[{"metadata":{"name":"a","managedFields":[{"manager":"someone","operation":"Update","fieldsV1":{"f:data":{}}}]}}]}`)
		default:
			_, _ = io.WriteString(w, `{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"42"}}`)
		}
	}))
	defer srv.Close()
	clk := clocktesting.NewFakePassiveClock(time.Now())
	reg := prometheus.NewRegistry()
	l := Layers{
		Fence:     fence.New(clk, time.Second),
		Revisions: &ownwrites.Revisions{},
		Throttled: observe.NewThrottled(reg, logr.Discard()),
		Filter:    cachefill.NewFilter("op"),
	}
	c := Client(srv.Client(), l)
	do := func(ctx context.Context, method, path string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, strings.NewReader("{}"))
		require.NoError(t, err)
		resp, err := c.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(body), nil
	}

	l.Fence.Renewed("leader", clk.Now().Add(-2*time.Second))
	_, err := do(context.Background(), http.MethodPatch, "/write")
	assert.True(t, fence.IsClosed(err), "the fence refuses a write past the deadline: %v", err)
	assert.Empty(t, reached, "a refused write reaches nothing")

	l.Fence.Renewed("leader", clk.Now())
	body, err := do(context.Background(), http.MethodPatch, "/write")
	require.NoError(t, err)
	assert.Contains(t, body, `"resourceVersion":"42"`, "the caller reads the body")
	assert.True(t, l.Revisions.Has("42"), "the stored write's version is recorded")

	_, err = do(context.Background(), http.MethodGet, "/busy")
	require.NoError(t, err)
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP opgen_api_throttled_total Requests the API server answered 429 Too Many Requests (API Priority and Fairness, or max-requests-inflight), by verb; client-go retries them after the answer's Retry-After.
# TYPE opgen_api_throttled_total counter
opgen_api_throttled_total{verb="get"} 1
`), "opgen_api_throttled_total"), "the 429 is counted")

	body, err = do(context.Background(), http.MethodGet, "/list")
	require.NoError(t, err)
	assert.Contains(t, body, `"manager":"someone"`, "a handler's list keeps every entry")
	body, err = do(cachefill.Fill(context.Background()), http.MethodGet, "/list")
	require.NoError(t, err)
	assert.NotContains(t, body, `"manager":"someone"`, "a cache's list is filtered")
	assert.Equal(t, []string{"PATCH /write", "GET /busy", "GET /list", "GET /list"}, reached)
}

// TestCacheFillsGunzipped: a cache's watch asks for gzip and reads the
// stream of gzip members the API server writes, filtered; without Gzip
// (rest.Config.DisableCompression) it asks for nothing.
func TestCacheFillsGunzipped(t *testing.T) {
	t.Parallel()
	var asked atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Store(r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Accept-Encoding") != "gzip" {
			_, _ = io.WriteString(w, `{"type":"ADDED","object":{"metadata":{"name":"a"}}}`)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		for _, name := range []string{"a", "b"} { // one member per flush
			zw := gzip.NewWriter(w)
			_, _ = io.WriteString(zw, `{"type":"ADDED","object":{"metadata":{"name":"`+name+`","managedFields":[{"manager":"x"}]}}}`+"\n")
			_ = zw.Close()
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	hc := srv.Client()
	hc.Transport.(*http.Transport).DisableCompression = true // Go's own gzip would hide whether the layer asked
	watch := func(l Layers) (string, *http.Response) {
		req, err := http.NewRequestWithContext(cachefill.Fill(context.Background()), http.MethodGet, srv.URL+"/api/v1/pods?watch=true", nil)
		require.NoError(t, err)
		resp, err := Client(hc, l).Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(body), resp
	}
	body, resp := watch(Layers{Gzip: true, Filter: cachefill.NewFilter("op")})
	assert.Equal(t, "gzip", asked.Load())
	assert.Equal(t, `{"type":"ADDED","object":{"metadata":{"name":"a"}}}`+"\n"+`{"type":"ADDED","object":{"metadata":{"name":"b"}}}`+"\n", body)
	assert.Empty(t, resp.Header.Get("Content-Encoding"))
	_, _ = watch(Layers{})
	assert.Equal(t, "", asked.Load(), "without Gzip a cache's watch asks for no encoding")
}
