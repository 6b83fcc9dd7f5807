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

// Waiter makes the caches ride out an outage of the API server.
//
// client-go's reflectors back off after each failed list or watch, up to
// 30 seconds, and retry a refused connection without a word. After a
// minute's outage they came back up to 49 seconds after the API server
// did. Here a list or watch that cannot reach the server waits for it in
// the request instead: it asks /readyz every probeEvery, and sends the
// request again the moment the server answers. The reflectors see no
// failure, so they have no backoff to sit out. The operator's transport
// (internal/transport) asks Retry after every failed request.
//
// While any cache waits, the operator is not ready, and each waiting
// resource is logged at most every outageLogEvery.
type Waiter struct {
	probe func(context.Context) error
	log   logr.Logger
	clock func() time.Time

	waiting atomic.Int64
	mu      sync.Mutex
	logged  map[string]time.Time // by URL path
	since   time.Time            // the first failure of the outage
}

// New returns the waiter of the operator whose API server probe answers,
// logging to log.
func New(probe func(context.Context) error, log logr.Logger) *Waiter {
	return &Waiter{probe: probe, log: log, clock: time.Now, logged: map[string]time.Time{}}
}

// outageLogEvery bounds how often one resource's wait is logged.
const outageLogEvery = 30 * time.Second

// probeEvery is how often a waiting cache asks whether the API server is
// back.
const probeEvery = 250 * time.Millisecond

// Retry reports whether to send req again after it failed with err. It
// does when req is a cache's list or watch (cachefill.Fill), err says that
// the API server cannot be reached, and the server answers again: Retry
// waits for that, asking /readyz every probeEvery, until req's context
// ends.
func (w *Waiter) Retry(req *http.Request, err error) bool {
	if req.Method != http.MethodGet || !cachefill.Filling(req.Context()) || req.Context().Value(probing{}) != nil {
		return false
	}
	if !unreachable(err) || req.Context().Err() != nil {
		return false
	}
	return w.wait(req, err)
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
func (w *Waiter) wait(req *http.Request, err error) bool {
	ctx := req.Context()
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	up := w.probe(context.WithValue(pctx, probing{}, true)) == nil
	cancel()
	if up {
		return false
	}
	w.waiting.Add(1)
	defer w.waiting.Add(-1)
	w.report(req.URL.Path, err)
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
		pctx, cancel = context.WithTimeout(ctx, 2*time.Second)
		perr := w.probe(context.WithValue(pctx, probing{}, true))
		cancel()
		if perr == nil {
			w.back()
			return true
		}
		w.report(req.URL.Path, err)
	}
}

// report logs that path's list or watch waits for the API server, at most
// every outageLogEvery.
func (w *Waiter) report(path string, err error) {
	now := w.clock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.since.IsZero() {
		w.since = now
	}
	if last, ok := w.logged[path]; ok && now.Sub(last) < outageLogEvery {
		return
	}
	w.logged[path] = now
	w.log.Error(err, "the API server is unreachable: the cache waits for it and watches again as soon as it answers", "path", path, "down", now.Sub(w.since).Round(time.Second), "nextLogIn", outageLogEvery)
}

// back logs the end of the outage, once.
func (w *Waiter) back() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.since.IsZero() {
		return
	}
	w.log.Info("the API server answers again: the caches watch again", "down", w.clock().Sub(w.since).Round(time.Millisecond))
	w.since = time.Time{}
	clear(w.logged)
}

// Waiting reports whether any cache waits for the API server.
func (w *Waiter) Waiting() bool { return w.waiting.Load() > 0 }
