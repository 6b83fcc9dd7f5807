package observe

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
)

// Throttling
//
// The API server's Priority and Fairness answers 429 Too Many Requests
// when the operator's priority level is full; client-go waits the answer's
// Retry-After and sends the request again (up to ten times), so the
// operator slows down and says nothing. Throttled counts every 429 by
// verb (opgen_api_throttled_total) and logs, once a minute at most, how
// many requests were throttled since its last line.

// throttleLogEvery is the least time between two log lines.
const throttleLogEvery = time.Minute

// Throttled counts the API server's 429s.
type Throttled struct {
	counter *prometheus.CounterVec
	log     logr.Logger
	now     func() time.Time

	mu     sync.Mutex
	logged time.Time      // when the last line was logged
	byVerb map[string]int // 429s since then
}

// NewThrottled registers opgen_api_throttled_total in reg and returns the
// counter of the operator's transport (internal/transport).
func NewThrottled(reg prometheus.Registerer, log logr.Logger) *Throttled {
	t := &Throttled{
		counter: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "opgen_api_throttled_total",
			Help: "Requests the API server answered 429 Too Many Requests (API Priority and Fairness, or max-requests-inflight), by verb; client-go retries them after the answer's Retry-After.",
		}, []string{"verb"}),
		log: log,
		now: time.Now,
	}
	reg.MustRegister(t.counter)
	return t
}

// Count counts resp when the API server throttled req.
func (t *Throttled) Count(req *http.Request, resp *http.Response) {
	if resp.StatusCode == http.StatusTooManyRequests {
		t.throttled(Verb(req))
	}
}

func (t *Throttled) throttled(verb string) {
	t.counter.WithLabelValues(verb).Inc()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byVerb == nil {
		t.byVerb = map[string]int{}
	}
	t.byVerb[verb]++
	now := t.now()
	if !t.logged.IsZero() && now.Sub(t.logged) < throttleLogEvery {
		return
	}
	total := 0
	for _, n := range t.byVerb {
		total += n
	}
	since := "since the start"
	if !t.logged.IsZero() {
		since = "in the last " + now.Sub(t.logged).Round(time.Second).String()
	}
	t.log.Info("the API server is throttling this operator (429 Too Many Requests): client-go retries each request after the server's Retry-After, and the operator slows down; raise its priority level's concurrency shares, or lower --kube-api-qps (opgen_api_throttled_total counts them)",
		"throttled", total, "byVerb", t.byVerb, "period", since)
	t.logged, t.byVerb = now, map[string]int{}
}

// Verb is the Kubernetes verb of an API request, from its method and path:
// get, list, watch, create, update, patch, delete or deletecollection.
func Verb(req *http.Request) string {
	switch req.Method {
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodGet, http.MethodHead:
		switch {
		case req.URL.Query().Get("watch") == "true":
			return "watch"
		case isCollection(req.URL.Path):
			return "list"
		}
		return "get"
	case http.MethodDelete:
		if isCollection(req.URL.Path) {
			return "deletecollection"
		}
		return "delete"
	}
	return strings.ToLower(req.Method)
}

// isCollection reports whether path names a collection of a resource:
// /api/v1/pods, /apis/g/v/namespaces/ns/things, not one object or a
// subresource.
func isCollection(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return false
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	return len(parts) == 1
}
