// Package outage makes the operator's caches ride out an outage of the
// API server: a list or watch that cannot reach it waits for it in the
// request, and is sent again the moment the server answers, so that
// client-go's reflectors have no backoff to sit out.
package outage

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/cachefill"
)

// Transport makes the caches ride out an outage of the API server.
//
// client-go's reflectors back off after each failed list or watch, up to
// 30 seconds, and retry a refused connection without a word. After a
// minute's outage they came back up to 49 seconds after the API server
// did. Here a list or watch that cannot reach the server waits for it in
// the request instead: it asks /readyz every probeEvery, and sends the
// request again the moment the server answers. The reflectors see no
// failure, so they have no backoff to sit out.
//
// While any cache waits, the operator is not ready, and each waiting
// resource is logged at most every outageLogEvery.
type Transport struct {
	next    http.RoundTripper
	timeout time.Duration // the client's, per request (Client)
	probe   func(context.Context) error
	log     logr.Logger
	clock   func() time.Time

	waiting atomic.Int64
	mu      sync.Mutex
	logged  map[string]time.Time // by URL path
	since   time.Time            // the first failure of the outage
}

// New returns the transport of the operator whose API server probe
// answers, logging to log.
func New(probe func(context.Context) error, log logr.Logger) *Transport {
	return &Transport{probe: probe, log: log, clock: time.Now, logged: map[string]time.Time{}}
}

// outageLogEvery bounds how often one resource's wait is logged.
const outageLogEvery = 30 * time.Second

// Client returns a copy of hc that sends through t.
//
// hc's Timeout (rest.Config's) moves into t, which applies it to each
// request as http.Client would, except to a watch of a cache, which
// lasts as long as the server keeps it, and to the wait for the API
// server: the client's Timeout would end both, and a reflector whose
// wait ended backs off (up to 30 s) instead of watching again at the
// server's return.
func (t *Transport) Client(hc *http.Client) *http.Client {
	out := *hc
	t.next = out.Transport
	if t.next == nil {
		t.next = http.DefaultTransport
	}
	t.timeout, out.Timeout = out.Timeout, 0
	out.Transport = t
	return &out
}

// probeEvery is how often a waiting cache asks whether the API server is
// back.
const probeEvery = 250 * time.Millisecond

// WrappedRoundTripper lets client-go's helpers (closing idle connections,
// reading the TLS config) reach the transport below.
func (t *Transport) WrappedRoundTripper() http.RoundTripper { return t.next }

func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || !cachefill.Filling(req.Context()) || req.Context().Value(probing{}) != nil {
		return t.send(req, t.timeout)
	}
	timeout := t.timeout
	if req.URL.Query().Get("watch") == "true" {
		timeout = 0
	}
	for {
		resp, err := t.send(req, timeout)
		if err == nil || !unreachable(err) || req.Context().Err() != nil {
			return resp, err
		}
		if !t.wait(req, err) {
			return nil, err
		}
	}
}

// send sends req once, within timeout when it is not 0: until its
// response's body is closed, as http.Client's Timeout.
func (t *Transport) send(req *http.Request, timeout time.Duration) (*http.Response, error) {
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

// probing marks the context of a probe: its request, made under the
// waiting request's context, goes straight through instead of waiting
// for the API server in turn.
type probing struct{}

// unreachable reports whether err says that the API server cannot be
// reached, rather than that it refused the request.
func unreachable(err error) bool {
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) ||
		errors.Is(err, io.ErrUnexpectedEOF) || utilnet.IsTimeout(err)
}

// wait waits until the API server answers /readyz again, and reports
// whether to send the request again. It does not when the request's
// context ended, nor when the server answered at once: then this request
// fails for a reason of its own, and the reflector's backoff is right.
func (t *Transport) wait(req *http.Request, err error) bool {
	ctx := req.Context()
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	up := t.probe(context.WithValue(pctx, probing{}, true)) == nil
	cancel()
	if up {
		return false
	}
	t.waiting.Add(1)
	defer t.waiting.Add(-1)
	t.report(req.URL.Path, err)
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
		pctx, cancel = context.WithTimeout(ctx, 2*time.Second)
		perr := t.probe(context.WithValue(pctx, probing{}, true))
		cancel()
		if perr == nil {
			t.back()
			return true
		}
		t.report(req.URL.Path, err)
	}
}

// report logs that path's list or watch waits for the API server, at most
// every outageLogEvery.
func (t *Transport) report(path string, err error) {
	now := t.clock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.since.IsZero() {
		t.since = now
	}
	if last, ok := t.logged[path]; ok && now.Sub(last) < outageLogEvery {
		return
	}
	t.logged[path] = now
	t.log.Error(err, "the API server is unreachable: the cache waits for it and watches again as soon as it answers", "path", path, "down", now.Sub(t.since).Round(time.Second), "nextLogIn", outageLogEvery)
}

// back logs the end of the outage, once.
func (t *Transport) back() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.since.IsZero() {
		return
	}
	t.log.Info("the API server answers again: the caches watch again", "down", t.clock().Sub(t.since).Round(time.Millisecond))
	t.since = time.Time{}
	clear(t.logged)
}

// Waiting reports whether any cache waits for the API server.
func (t *Transport) Waiting() bool { return t.waiting.Load() > 0 }
