// Package transport is the operator's one HTTP transport to the API
// server. Every request of the operator's clients passes the same layers,
// and RoundTrip states them in the order they act:
//
//  1. the fence: a replica that may no longer lead sends no write
//     (internal/fence);
//  2. the client's timeout, per request, except for a cache's watch;
//  3. an outage: a cache's list or watch that cannot reach the API server
//     waits for it and is sent again (internal/outage);
//  4. the answer: the resourceVersion a write stored is recorded
//     (internal/ownwrites), a 429 is counted (internal/observe), and a
//     cache's list or watch is decompressed one gzip member at a time
//     and filtered of what no reader keeps (internal/cachefill).
//
// A preview (internal/preview) wraps the whole transport: it turns the
// writes into dry runs before any layer sees them.
package transport

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/cachefill"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/fence"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/observe"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/outage"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/ownwrites"
)

// Layers are the parts a request passes. A nil layer is left out.
type Layers struct {
	Fence     *fence.Fence         // nil without leader election, and in a preview
	Outage    *outage.Waiter       // nil: a request that cannot reach the server fails at once
	Revisions *ownwrites.Revisions // the resourceVersions of the operator's writes
	Throttled *observe.Throttled   // the API server's 429s
	Filter    *cachefill.Filter    // nil: cache fills pass as the server sent them
	// Gzip: a cache's list or watch asks for gzip, and the transport
	// decompresses it (cachefill.Gunzip). False when the client was
	// told to ask for no compression (rest.Config.DisableCompression).
	Gzip bool
}

// Client returns a copy of hc whose requests pass l. rest.HTTPClientFor
// may return http.DefaultClient, which the whole process shares, so hc
// itself is left alone.
//
// hc's Timeout (rest.Config's) moves into the transport, which applies it
// to each request as http.Client would, except to a cache's watch, which
// lasts as long as the server keeps it, and to the wait for the API
// server: the client's Timeout would end both, and a reflector whose wait
// ended backs off (up to 30 s) instead of watching again at the server's
// return.
func Client(hc *http.Client, l Layers) *http.Client {
	out := *hc
	next := out.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	out.Transport = &roundTripper{Layers: l, next: next, timeout: out.Timeout}
	out.Timeout = 0
	return &out
}

type roundTripper struct {
	Layers
	next    http.RoundTripper
	timeout time.Duration // the client's, per request
}

// WrappedRoundTripper lets client-go's helpers (closing idle connections,
// reading the TLS config) reach the transport below.
func (t *roundTripper) WrappedRoundTripper() http.RoundTripper { return t.next }

func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.Fence != nil {
		if err := t.Fence.Admit(req); err != nil {
			return nil, err
		}
	}
	timeout := t.timeout
	if cachefill.Filling(req.Context()) && req.URL.Query().Get("watch") == "true" {
		timeout = 0
	}
	gzipped := false
	if t.Gzip {
		req, gzipped = cachefill.AskGzip(req)
	}
	resp, err := t.send(req, timeout)
	for err != nil && t.Outage != nil && t.Outage.Retry(req, err) {
		resp, err = t.send(req, timeout)
	}
	if err != nil {
		return nil, err
	}
	if t.Revisions != nil {
		t.Revisions.Record(req, resp)
	}
	if t.Throttled != nil {
		t.Throttled.Count(req, resp)
	}
	if gzipped {
		cachefill.Gunzip(resp)
	}
	if t.Filter != nil {
		t.Filter.Response(req, resp)
	}
	return resp, nil
}

// send sends req once, within timeout when it is not 0: until its
// response's body is closed, as http.Client's Timeout.
func (t *roundTripper) send(req *http.Request, timeout time.Duration) (*http.Response, error) {
	if timeout <= 0 {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), timeout)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelBody ends a request's timeout when its body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
