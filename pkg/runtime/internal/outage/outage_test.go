package outage

import (
	"context"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
)

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

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
