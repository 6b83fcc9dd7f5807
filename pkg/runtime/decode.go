package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"sync/atomic"
)

// The caches keep only the operator's own apply entry of managedFields
// (keepOwnManagedFields), yet client-go decodes every entry of every object
// it lists or watches before the transform drops them: on objects written
// by two managers that is 40 % of the JSON, decoded and thrown away. The
// operator's HTTP client therefore rewrites the JSON of the responses the
// caches fill from (requests made under cacheFill's context: the informers'
// lists and watches, never a handler's own reads) so that the entries the
// transform would drop never reach the decoder. The transforms still run
// after the decode and decide what is cached; the filter keeps a superset
// of what they keep, so the cached objects are the same with or without it.

// cacheFillKey marks a context whose API requests fill a cache.
type cacheFillKey struct{}

// cacheFill returns ctx marked so that the operator's HTTP client filters
// the managedFields of the lists and watches made under it.
func cacheFill(ctx context.Context) context.Context {
	return context.WithValue(ctx, cacheFillKey{}, true)
}

func isCacheFill(ctx context.Context) bool {
	v, _ := ctx.Value(cacheFillKey{}).(bool)
	return v
}

// managedFieldsFilter drops the managedFields entries the caches do not
// keep from list and watch responses.
type managedFieldsFilter struct {
	manager []byte // the operator's name as a JSON string
	name    string
	// heads keeps every entry without its field set (fieldsType and
	// fieldsV1), as trimManagedFields does for a controller that
	// dispatches by written version; off, only the own apply entry stays.
	heads atomic.Bool
}

func newManagedFieldsFilter(manager string) *managedFieldsFilter {
	m, _ := json.Marshal(manager)
	return &managedFieldsFilter{manager: m, name: manager}
}

// withFilter returns a copy of hc whose transport filters cache fills
// (rest.HTTPClientFor may return http.DefaultClient, shared by the process).
func withFilter(hc *http.Client, f *managedFieldsFilter) *http.Client {
	out := *hc
	next := out.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	out.Transport = &filterTransport{next: next, filter: f}
	return &out
}

// filterTransport applies a managedFieldsFilter to the JSON responses of
// the GET requests that fill caches.
type filterTransport struct {
	next   http.RoundTripper
	filter *managedFieldsFilter
}

func (t *filterTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusOK || !isCacheFill(req.Context()) {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" {
		return resp, err // protobuf, CBOR: not filtered
	}
	resp.Body = &filterReader{body: resp.Body, filter: t.filter}
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	return resp, nil
}

// filterReader passes a stream of JSON values (one list, or the events of
// a watch) through managedFieldsFilter.appendFiltered, value by value, as
// soon as each is complete. It filters in place, in the buffer it reads
// into: a value only ever shrinks.
type filterReader struct {
	body   io.ReadCloser
	filter *managedFieldsFilter

	// buf[r:w] is filtered and not yet read; buf[start:] is the value in
	// progress, scanned up to scan.
	buf               []byte
	r, w, start, scan int
	err               error
	raw               bool // the stream is not a sequence of objects: pass it on as is

	depth    int
	inString bool
	escape   bool
}

func (fr *filterReader) Close() error { return fr.body.Close() }

func (fr *filterReader) Read(p []byte) (int, error) {
	for {
		if fr.r < fr.w {
			n := copy(p, fr.buf[fr.r:fr.w])
			fr.r += n
			return n, nil
		}
		if fr.err != nil {
			if fr.start < len(fr.buf) { // an incomplete value: the decoder reports it
				fr.r, fr.w, fr.start = fr.start, len(fr.buf), len(fr.buf)
				continue
			}
			return 0, fr.err
		}
		// move the value in progress to the front
		n := copy(fr.buf, fr.buf[fr.start:])
		fr.buf = fr.buf[:n]
		fr.scan -= fr.start
		fr.r, fr.w, fr.start = 0, 0, 0
		if cap(fr.buf)-len(fr.buf) < 16<<10 {
			grown := make([]byte, len(fr.buf), 2*cap(fr.buf)+32<<10)
			copy(grown, fr.buf)
			fr.buf = grown
		}
		m, err := fr.body.Read(fr.buf[len(fr.buf):cap(fr.buf)])
		fr.buf = fr.buf[:len(fr.buf)+m]
		fr.process()
		fr.err = err
	}
}

// process filters every complete value after scan and moves it, and the
// whitespace between values, to buf[:w].
func (fr *filterReader) process() {
	b := fr.buf
	if fr.raw {
		fr.w = len(b)
		fr.start, fr.scan = len(b), len(b)
		return
	}
	i := fr.scan
	for i < len(b) {
		c := b[i]
		if fr.depth == 0 {
			switch c {
			case ' ', '\t', '\r', '\n':
				b[fr.w] = c
				fr.w++
				i++
				fr.start = i
				continue
			case '{':
				fr.start = i
			default:
				fr.raw = true
				fr.w = copy(b[fr.w:], b[i:]) + fr.w
				fr.buf = b[:fr.w]
				fr.start, fr.scan = fr.w, fr.w
				return
			}
		}
		switch {
		case fr.inString:
			switch {
			case fr.escape:
				fr.escape = false
			case c == '\\':
				fr.escape = true
			case c == '"':
				fr.inString = false
			}
		case c == '"':
			fr.inString = true
		case c == '{' || c == '[':
			fr.depth++
		case c == '}' || c == ']':
			fr.depth--
			if fr.depth == 0 {
				// filtered in place: w <= start and the value only shrinks
				fr.w += len(fr.filter.appendFiltered(b[fr.w:fr.w], b[fr.start:i+1]))
				fr.start = i + 1
			}
		}
		i++
	}
	fr.scan = i
}

// appendFiltered appends v, one JSON object, to dst without the
// managedFields entries the caches drop: v is a list (its items are
// filtered), a watch event (its object is) or an object. dst may share v's
// array if it ends at or before v's start: the output never runs ahead of
// the input it comes from.
func (f *managedFieldsFilter) appendFiltered(dst, v []byte) []byte {
	var edits []edit
	ok := members(v, 0, func(key []byte, ks, vs, ve int) bool {
		switch {
		case string(key) == "items" && v[vs] == '[':
			return elements(v, vs, func(es, ee int) bool {
				if v[es] == '{' {
					edits = f.objectEdits(edits, v, es)
				}
				return true
			})
		case string(key) == "object" && v[vs] == '{':
			edits = f.objectEdits(edits, v, vs)
		case string(key) == "metadata" && v[vs] == '{':
			edits = f.metadataEdits(edits, v, vs)
		}
		return true
	})
	if !ok || len(edits) == 0 {
		return append(dst, v...)
	}
	last := 0
	for _, e := range edits {
		dst = append(dst, v[last:e.start]...)
		dst = append(dst, e.with...)
		last = e.end
	}
	return append(dst, v[last:]...)
}

// edit replaces v[start:end] with with.
type edit struct {
	start, end int
	with       []byte
}

// objectEdits adds the edits of the object at v[i:]'s metadata.
func (f *managedFieldsFilter) objectEdits(edits []edit, v []byte, i int) []edit {
	members(v, i, func(key []byte, _, vs, _ int) bool {
		if string(key) == "metadata" && v[vs] == '{' {
			edits = f.metadataEdits(edits, v, vs)
			return false
		}
		return true
	})
	return edits
}

// metadataEdits adds the edit of the managedFields of the metadata object
// at v[i:]: the list without the dropped entries, or no member at all when
// no entry stays.
func (f *managedFieldsFilter) metadataEdits(edits []edit, v []byte, i int) []edit {
	prevEnd := -1 // end of the previous member's value
	var drop *edit
	members(v, i, func(key []byte, ks, vs, ve int) bool {
		if drop != nil { // the dropped member was the first: cut up to this one
			drop.end = ks
			return false
		}
		if string(key) != "managedFields" || v[vs] != '[' {
			prevEnd = ve
			return true
		}
		with, kept := f.entries(v[vs:ve])
		switch {
		case kept:
			edits = append(edits, edit{vs, ve, with})
			return false
		case prevEnd >= 0: // cut from the comma after the previous member
			edits = append(edits, edit{prevEnd, ve, nil})
			return false
		default:
			edits = append(edits, edit{ks, ve, nil})
			drop = &edits[len(edits)-1]
			return true
		}
	})
	return edits
}

// entries returns the managedFields list arr without what the caches drop,
// and whether any entry stays.
func (f *managedFieldsFilter) entries(arr []byte) ([]byte, bool) {
	heads := f.heads.Load()
	out := make([]byte, 0, 256)
	out = append(out, '[')
	n := 0
	elements(arr, 0, func(es, ee int) bool {
		if arr[es] != '{' {
			return true
		}
		var manager, operation, subresource []byte
		var fields [2][2]int // fieldsType and fieldsV1: key start, value end
		nf := 0
		members(arr, es, func(key []byte, ks, vs, ve int) bool {
			switch string(key) {
			case "manager":
				manager = arr[vs:ve]
			case "operation":
				operation = arr[vs:ve]
			case "subresource":
				subresource = arr[vs:ve]
			case "fieldsType", "fieldsV1":
				if nf < 2 {
					fields[nf] = [2]int{ks, ve}
					nf++
				}
			}
			return true
		})
		own := f.isManager(manager) && string(operation) == `"Apply"` && (subresource == nil || string(subresource) == `""`)
		if !own && !heads {
			return true
		}
		if n > 0 {
			out = append(out, ',')
		}
		n++
		if own || nf == 0 {
			out = append(out, arr[es:ee]...)
			return true
		}
		// the entry without its field set
		out = append(out, '{')
		first := true
		members(arr, es, func(key []byte, ks, vs, ve int) bool {
			if string(key) == "fieldsType" || string(key) == "fieldsV1" {
				return true
			}
			if !first {
				out = append(out, ',')
			}
			first = false
			out = append(out, arr[ks:ve]...)
			return true
		})
		out = append(out, '}')
		return true
	})
	out = append(out, ']')
	return out, n > 0
}

// isManager reports whether the JSON string s is the operator's name.
func (f *managedFieldsFilter) isManager(s []byte) bool {
	if bytes.Equal(s, f.manager) {
		return true
	}
	if bytes.IndexByte(s, '\\') < 0 {
		return false
	}
	var name string
	return json.Unmarshal(s, &name) == nil && name == f.name
}

// members calls fn with each member of the JSON object at v[i:]: its key
// (raw, without quotes), the offset of the key's opening quote and the
// bounds of its value, until fn returns false. It returns false if v is
// not well-formed there.
func members(v []byte, i int, fn func(key []byte, ks, vs, ve int) bool) bool {
	if i >= len(v) || v[i] != '{' {
		return false
	}
	i = skipSpace(v, i+1)
	if i < len(v) && v[i] == '}' {
		return true
	}
	for i < len(v) {
		if v[i] != '"' {
			return false
		}
		ks := i
		ke := skipString(v, i)
		if ke < 0 {
			return false
		}
		i = skipSpace(v, ke)
		if i >= len(v) || v[i] != ':' {
			return false
		}
		vs := skipSpace(v, i+1)
		ve := skipValue(v, vs)
		if ve < 0 {
			return false
		}
		if !fn(v[ks+1:ke-1], ks, vs, ve) {
			return true
		}
		i = skipSpace(v, ve)
		if i >= len(v) {
			return false
		}
		if v[i] == '}' {
			return true
		}
		if v[i] != ',' {
			return false
		}
		i = skipSpace(v, i+1)
	}
	return false
}

// elements calls fn with the bounds of each element of the JSON array at
// v[i:] until fn returns false.
func elements(v []byte, i int, fn func(es, ee int) bool) bool {
	if i >= len(v) || v[i] != '[' {
		return false
	}
	i = skipSpace(v, i+1)
	if i < len(v) && v[i] == ']' {
		return true
	}
	for i < len(v) {
		ee := skipValue(v, i)
		if ee < 0 {
			return false
		}
		if !fn(i, ee) {
			return true
		}
		i = skipSpace(v, ee)
		if i >= len(v) {
			return false
		}
		if v[i] == ']' {
			return true
		}
		if v[i] != ',' {
			return false
		}
		i = skipSpace(v, i+1)
	}
	return false
}

func skipSpace(v []byte, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\n' || v[i] == '\t' || v[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset after the JSON string at v[i:], or -1.
func skipString(v []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(v[j:], '"')
		if k < 0 {
			return -1
		}
		k += j
		backslashes := 0
		for p := k - 1; p > i && v[p] == '\\'; p-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return k + 1
		}
		j = k + 1
	}
}

// skipValue returns the offset after the JSON value at v[i:], or -1.
func skipValue(v []byte, i int) int {
	if i >= len(v) {
		return -1
	}
	switch v[i] {
	case '"':
		return skipString(v, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(v); j++ {
			switch v[j] {
			case '"':
				e := skipString(v, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(v) {
			switch v[j] {
			case ',', '}', ']', ' ', '\n', '\t', '\r':
				return j
			}
			j++
		}
		return j
	}
}
