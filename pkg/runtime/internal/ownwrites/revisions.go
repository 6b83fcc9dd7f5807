package ownwrites

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
)

// revisionsKept bounds the resourceVersions Revisions remembers: a write's
// watch event comes back within moments, long before this many further
// writes of the operator's.
const revisionsKept = 2048

// Revisions are the resourceVersions the operator's latest writes
// returned, whichever client made them: a watch event of an object at
// one of them is the operator's own write seen back (an echo), not
// someone's change. resourceVersions are the store's revisions, unique
// across every kind.
type Revisions struct {
	mu   sync.Mutex
	ring [revisionsKept]uint64
	next int
	set  map[uint64]struct{}
}

// Add records that a write of the operator's returned rv.
func (r *Revisions) Add(rv string) {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil || n == 0 {
		return // not the API server's form: such a write is not told apart
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.set == nil {
		r.set = make(map[uint64]struct{}, revisionsKept)
	}
	if old := r.ring[r.next]; old != 0 {
		delete(r.set, old)
	}
	r.ring[r.next] = n
	r.next = (r.next + 1) % revisionsKept
	r.set[n] = struct{}{}
}

// Has reports whether a write of the operator's returned rv lately.
func (r *Revisions) Has(rv string) bool {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.set[n]
	return ok
}

// Wrap returns next recording the writes' resourceVersions in r (a
// rest.Config's WrapTransport, for the clients a handler builds; the
// operator's own transport calls Record).
func (r *Revisions) Wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper{next: next, revs: r}
}

type roundTripper struct {
	next http.RoundTripper
	revs *Revisions
}

// WrappedRoundTripper lets client-go reach the transport below.
func (rt roundTripper) WrappedRoundTripper() http.RoundTripper { return rt.next }

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.next.RoundTrip(req)
	if err == nil {
		rt.revs.Record(req, resp)
	}
	return resp, err
}

// Record records the resourceVersion of the object resp answers req with
// when req is a write the store kept, answered in JSON. It reads the body
// whole and puts an unread copy in its place.
func (r *Revisions) Record(req *http.Request, resp *http.Response) {
	if !storedWrite(req, resp) {
		return
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	if err != nil {
		return // the caller's read of the body fails as it would have
	}
	var obj struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if json.Unmarshal(data, &obj) == nil {
		r.Add(obj.Metadata.ResourceVersion)
	}
}

// storedWrite reports whether resp answers a write with an object in JSON
// that the store holds (not a dry run's).
func storedWrite(req *http.Request, resp *http.Response) bool {
	switch req.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return false // a delete's answer is the object before it went, or a Status
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 || resp.Header.Get("Content-Encoding") != "" {
		return false
	}
	if req.URL.Query().Has("dryRun") {
		return false
	}
	ct, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return err == nil && ct == "application/json"
}
