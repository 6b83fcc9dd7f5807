package outage

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/cachefill"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRetryOnlyCacheFills: only a cache's list or watch that could not
// reach the API server is sent again, once the server answers; a write, a
// handler's read, another error, and a request whose server answered at
// once fail as they are.
func TestRetryOnlyCacheFills(t *testing.T) {
	t.Parallel()
	probes := 0
	w := New(func(context.Context) error {
		probes++
		if probes < 3 {
			return syscall.ECONNREFUSED
		}
		return nil
	}, logr.Discard())
	req := func(ctx context.Context, method string) *http.Request {
		r, err := http.NewRequestWithContext(ctx, method, "https://api.test/api/v1/configmaps", nil)
		require.NoError(t, err)
		return r
	}
	fill := cachefill.Fill(context.Background())
	assert.False(t, w.Retry(req(fill, http.MethodPost), syscall.ECONNREFUSED), "a write")
	assert.False(t, w.Retry(req(context.Background(), http.MethodGet), syscall.ECONNREFUSED), "a handler's read")
	assert.False(t, w.Retry(req(fill, http.MethodGet), errors.New("bad request")), "another error")
	assert.Zero(t, probes, "none of them waited")
	assert.True(t, w.Retry(req(fill, http.MethodGet), syscall.ECONNREFUSED), "a cache's list, once the server answers")
	assert.Equal(t, 3, probes)
	assert.False(t, w.Retry(req(fill, http.MethodGet), syscall.ECONNREFUSED), "the server answered at once")
	assert.False(t, w.Waiting())
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
