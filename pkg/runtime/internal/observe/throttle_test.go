package observe

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVerb(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ method, url, verb string }{
		{"GET", "/api/v1/pods", "list"},
		{"GET", "/api/v1/namespaces/ns/pods", "list"},
		{"GET", "/api/v1/namespaces/ns/pods/p", "get"},
		{"GET", "/api/v1/namespaces", "list"},
		{"GET", "/api/v1/namespaces/ns", "get"},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments?watch=true", "watch"},
		{"GET", "/apis/example.com/v1/widgets/w/status", "get"},
		{"POST", "/api/v1/namespaces/ns/events", "create"},
		{"PUT", "/apis/apps/v1/namespaces/ns/deployments/d", "update"},
		{"PATCH", "/apis/apps/v1/namespaces/ns/deployments/d/status", "patch"},
		{"DELETE", "/apis/apps/v1/namespaces/ns/deployments/d", "delete"},
		{"DELETE", "/apis/apps/v1/namespaces/ns/deployments", "deletecollection"},
	} {
		req := httptest.NewRequest(tc.method, tc.url, nil)
		assert.Equal(t, tc.verb, Verb(req), "%s %s", tc.method, tc.url)
	}
}

// TestThrottledCountsAndLogsOnceAMinute: every 429 is counted by verb;
// the first is logged, the next only a minute later, with the count of
// the minute.
func TestThrottledCountsAndLogsOnceAMinute(t *testing.T) {
	t.Parallel()
	code := http.StatusTooManyRequests
	var lines []string
	log := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{})
	reg := prometheus.NewRegistry()
	th := NewThrottled(reg, logr.Logger(log))
	now := time.Unix(1000, 0)
	th.now = func() time.Time { return now }
	get := func(path string) {
		req := httptest.NewRequest(http.MethodGet, "https://api.test"+path, nil)
		th.Count(req, &http.Response{StatusCode: code})
	}
	get("/api/v1/namespaces/ns/configmaps")
	get("/api/v1/namespaces/ns/configmaps/c")
	get("/api/v1/namespaces/ns/configmaps/c")
	assert.Equal(t, 1.0, testutil.ToFloat64(th.counter.WithLabelValues("list")))
	assert.Equal(t, 2.0, testutil.ToFloat64(th.counter.WithLabelValues("get")))
	require.Len(t, lines, 1, "one line a minute at most")
	assert.Contains(t, lines[0], `"throttled"=1`)
	now = now.Add(time.Minute)
	get("/api/v1/namespaces/ns/configmaps")
	require.Len(t, lines, 2)
	assert.Contains(t, lines[1], `"throttled"=3`, "the line counts what was not logged")
	code = http.StatusOK
	get("/api/v1/namespaces/ns/configmaps")
	assert.Equal(t, 2.0, testutil.ToFloat64(th.counter.WithLabelValues("list")), "a 200 is not counted")
}
