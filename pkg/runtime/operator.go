package runtime

import (
	"net/http"

	"k8s.io/client-go/rest"
)

// Operator owns the REST config, the informers, the controllers, leader
// election, the metrics and health server and shutdown.
type Operator struct {
	config     *rest.Config
	httpClient *http.Client
}

// RESTConfig returns the config the operator talks to the API server with.
func (o *Operator) RESTConfig() *rest.Config { return o.config }

// HTTPClient returns the HTTP client shared by every client the operator
// creates; pass it to generated NewForConfigAndClient constructors.
func (o *Operator) HTTPClient() *http.Client { return o.httpClient }
