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

// SetDeniedRetry caps the backoff of refused checks of the configurations
// of servers made from now on, and returns the way back.
func SetDeniedRetry(retry time.Duration) (restore func()) {
	old := deniedRetry
	deniedRetry = retry
	return func() { deniedRetry = old }
}
