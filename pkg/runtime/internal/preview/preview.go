// Package preview turns an operator's writes into server-side dry runs
// and records what each would have changed.
//
// Every mutating request of the operator's HTTP client (Client) leaves
// with dryRun=All: the API server runs admission, defaulting and
// validation, answers as it would, and stores nothing. The object an
// update, a patch or a delete changes is read (a GET, or the object a Live
// cache holds at the version the dry run ran over), and the change
// recorded is the field-level difference between it and the server's
// answer. A write
// that would change nothing is not recorded. The reviews the secure
// metrics send store nothing and pass untouched, as in package fence.
//
// A Preview is the report of one dry run of an operator: Report gives it,
// per object, with the Events that would have been emitted.
package preview

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// Preview records the changes the dry runs of an operator's writes would
// have made, and the actions that failed.
type Preview struct {
	mu       sync.Mutex
	changes  []Change
	events   []Event
	failures []string
	// cached holds the objects a write is diffed against, when it holds
	// the write's object (see Live); nil until ReadFrom.
	cached atomic.Pointer[Live]
}

// New returns an empty preview.
func New() *Preview { return &Preview{} }

// ReadFrom diffs the writes to the objects l caches against them, and
// the others against a GET, as before.
func (p *Preview) ReadFrom(l *Live) { p.cached.Store(l) }

// Client returns c with every mutating request it sends turned into a
// dry run and recorded in p.
func (p *Preview) Client(c *http.Client) *http.Client {
	out := *c
	out.Transport = p.Wrap(c.Transport)
	return &out
}

// Wrap returns rt (http.DefaultTransport when nil) with every mutating
// request turned into a dry run and recorded in p: a rest.Config's
// WrapTransport.
func (p *Preview) Wrap(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return roundTripper{preview: p, next: rt}
}

type roundTripper struct {
	preview *Preview
	next    http.RoundTripper
}

// WrappedRoundTripper lets client-go's helpers (closing idle connections,
// reading the TLS config) reach the transport below.
func (rt roundTripper) WrappedRoundTripper() http.RoundTripper { return rt.next }

func (rt roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	if !mutating(r) || exempt(r) {
		return rt.next.RoundTrip(r)
	}
	t, ok := ParseTarget(r.URL.Path)
	read := ok && r.Method != http.MethodPost && t.Name != ""
	cached := rt.preview.cached.Load()
	// A write to an object of the cache is diffed after its dry run, which
	// tells whether the cache holds the version it ran over.
	fromCache := read && cached.watches(t)
	var live map[string]any
	if read && !fromCache {
		var err error
		if live, err = rt.live(r, t); err != nil {
			return nil, err
		}
	}
	dry, err := DryRun(r)
	if err != nil {
		return nil, err
	}
	resp, err := rt.next.RoundTrip(dry)
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, err // refused: the handler sees why, nothing would change
	}
	answer, err := readBody(resp)
	if err != nil {
		return nil, err
	}
	if !ok {
		return resp, nil
	}
	after := decode(answer)
	if fromCache {
		if live, err = rt.cachedOrLive(r, t, cached, after); err != nil {
			return nil, err
		}
	}
	rt.preview.record(r.Method, t, live, after)
	return resp, nil
}

// cachedOrLive returns the object r changed as cached holds it when the
// dry run that answered after ran over it, or else reads it.
func (rt roundTripper) cachedOrLive(r *http.Request, t Target, cached *Live, after map[string]any) (map[string]any, error) {
	if live, ok := cached.before(r.Context(), t, r.Method, after); ok {
		return live, nil
	}
	return rt.live(r, t)
}

// decode reads a dry run's answer: nil when it is not a JSON object, and
// the change names the object only.
func decode(answer []byte) map[string]any {
	var after map[string]any
	_ = json.Unmarshal(answer, &after)
	return after
}

// DryRun returns a copy of r that asks the API server for a dry run: in
// its query, and for a delete with a body in its DeleteOptions too, as
// the API server reads a delete's options from its body alone when it
// has one.
func DryRun(r *http.Request) (*http.Request, error) {
	out := r.Clone(r.Context())
	q := out.URL.Query()
	q.Set("dryRun", "All")
	out.URL.RawQuery = q.Encode()
	if r.Method != http.MethodDelete || r.Body == nil || r.Body == http.NoBody {
		return out, nil
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body)) > 0 {
		var opts map[string]any
		if err := json.Unmarshal(body, &opts); err != nil {
			return nil, fmt.Errorf("preview: a delete whose options are not JSON cannot be sent as a dry run: %w", err)
		}
		opts["dryRun"] = []string{"All"}
		if body, err = json.Marshal(opts); err != nil {
			return nil, err
		}
	}
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.ContentLength = int64(len(body))
	return out, nil
}

// live reads the object r is about to change, or nil when there is none.
// A status write reads the main resource: GET of a status subresource
// returns the whole object too, but the operator's role may grant get on
// the main resource only. Other subresources (scale) answer with an object
// of their own, which only their own GET returns.
func (rt roundTripper) live(r *http.Request, t Target) (map[string]any, error) {
	if t.Subresource == "status" {
		t.Subresource = ""
	}
	u := *r.URL
	u.Path, u.RawPath, u.RawQuery = t.Path(), "", ""
	get, err := http.NewRequestWithContext(r.Context(), http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	get.Header.Set("Accept", "application/json")
	if ua := r.Header.Get("User-Agent"); ua != "" {
		get.Header.Set("User-Agent", ua)
	}
	resp, err := rt.next.RoundTrip(get)
	if err != nil {
		return nil, fmt.Errorf("preview: read %s before its dry run: %w", t.Path(), err)
	}
	data, err := readBody(resp)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, nil
	case resp.StatusCode > 299:
		return nil, fmt.Errorf("preview: read %s before its dry run: %s: %s", t.Path(), resp.Status, bytes.TrimSpace(data))
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("preview: read %s before its dry run: %w", t.Path(), err)
	}
	return obj, nil
}

// readBody reads resp's body and puts it back for the caller. It returns
// the body decompressed when the server compressed it for a caller that
// asked for it itself.
func readBody(resp *http.Response) ([]byte, error) {
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	if resp.Header.Get("Content-Encoding") != "gzip" {
		return data, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

func mutating(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// exemptPaths are the reviews the secure metrics send: they store
// nothing. A Lease is not exempt: a preview runs without election, and a
// Lease it wrote would be a write.
var exemptPaths = []string{"/apis/authentication.k8s.io/", "/apis/authorization.k8s.io/"}

func exempt(r *http.Request) bool {
	for _, p := range exemptPaths {
		if strings.HasPrefix(r.URL.Path, p) {
			return true
		}
	}
	return false
}
