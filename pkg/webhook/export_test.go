package webhook

import (
	"net/http"

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
