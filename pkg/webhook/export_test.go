package webhook

import (
	"net/http"
	"time"

	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// HandlerFor is op's webhook server's handler, to drive it without TLS.
func HandlerFor(op *runtime.Operator) http.Handler {
	s, err := serverFor(op)
	if err != nil {
		panic(err)
	}
	return s.mux
}

// SetRecheck sets how often the servers made from now on check their
// registrations, and returns the way back.
func SetRecheck(d time.Duration) (restore func()) {
	old := localRecheck
	localRecheck = d
	return func() { localRecheck = old }
}

// SetDenied sets how long refused checks of the configurations are retried
// as a starting API server's, and how often after that, and returns the
// way back.
func SetDenied(grace, retry time.Duration) (restore func()) {
	oldGrace, oldRetry := deniedGrace, deniedRetry
	deniedGrace, deniedRetry = grace, retry
	return func() { deniedGrace, deniedRetry = oldGrace, oldRetry }
}
