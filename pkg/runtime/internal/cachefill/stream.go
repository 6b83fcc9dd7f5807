package cachefill

import (
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/jsonscan"
)

// fillKey marks a context whose API requests fill a cache.
type fillKey struct{}

// Fill returns ctx marked so that the operator's transport filters the
// lists and watches made under it.
func Fill(ctx context.Context) context.Context {
	return context.WithValue(ctx, fillKey{}, true)
}

// Filling reports whether ctx comes from Fill: its requests fill a cache.
func Filling(ctx context.Context) bool {
	v, _ := ctx.Value(fillKey{}).(bool)
	return v
}

// Filter drops from cache fills the managedFields entries that Trim
// would drop after the decode, and of the requests made under KeepSpec
// what the Spec drops.
type Filter struct {
	fields  bool   // managedFields are filtered
	manager []byte // the operator's name as a JSON string
	name    string
	heads   atomic.Bool
}

// NewFilter returns the filter of an operator whose field manager is
// manager.
func NewFilter(manager string) *Filter {
	m, _ := json.Marshal(manager)
	return &Filter{fields: true, manager: m, name: manager}
}

// NewSpecFilter returns the filter of an operator whose caches keep every
// managedFields entry: it filters only specs, under KeepSpec.
func NewSpecFilter() *Filter { return &Filter{} }

// KeepHeads makes the filter keep every entry without its field set, as
// Trim does with heads. A controller that dispatches by written version
// needs them.
func (f *Filter) KeepHeads() { f.heads.Store(true) }

// Response filters resp's body as it is read, when it is the JSON answer
// of a GET that fills a cache (Fill): the operator's transport
// (internal/transport) passes it every answer.
func (f *Filter) Response(req *http.Request, resp *http.Response) {
	if req.Method != http.MethodGet || resp.StatusCode != http.StatusOK || !Filling(req.Context()) {
		return
	}
	keep := keptSpec(req.Context())
	if !f.fields && keep == nil {
		return
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" {
		return // protobuf, CBOR: not filtered
	}
	resp.Body = &reader{body: resp.Body, filter: f, keep: keep}
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
}

// reader passes a stream of JSON values through the filter, one value at
// a time, as soon as each is complete. The stream is one list, or the
// events of a watch. It filters in place: a value only ever shrinks.
//
// It holds a buffer only while bytes are in it: a watch that waits for
// the server (most of a watch's life) holds none, which matters to a
// sharded member, with a watch per bucket it holds.
type reader struct {
	body   io.ReadCloser
	filter *Filter
	keep   Spec // what stays of each spec; nil: all

	// buf[r:w] is filtered and not read yet. buf[start:] is the value in
	// progress, scanned up to scan.
	buf               []byte
	r, w, start, scan int
	err               error
	raw               bool // not a sequence of objects: passed on as it is
	idle              [64]byte

	depth    int
	inString bool
	escape   bool
}

func (fr *reader) Close() error { return fr.body.Close() }

func (fr *reader) Read(p []byte) (int, error) {
	for {
		if fr.r < fr.w {
			n := copy(p, fr.buf[fr.r:fr.w])
			fr.r += n
			fr.release()
			return n, nil
		}
		if fr.err != nil {
			if fr.start < len(fr.buf) { // an incomplete value: the decoder reports it
				fr.r, fr.w, fr.start = fr.start, len(fr.buf), len(fr.buf)
				continue
			}
			return 0, fr.err
		}
		fr.fill()
	}
}

// release gives the buffer back to the pool once all of it was read.
func (fr *reader) release() {
	if fr.buf == nil || fr.r < fr.w || fr.start < len(fr.buf) {
		return
	}
	putStreamBuf(fr.buf)
	fr.buf = nil
	fr.r, fr.w, fr.start, fr.scan = 0, 0, 0, 0
}

// fill moves the value in progress to the front, reads more and filters
// what is complete. Without a buffer it waits for the server with a small
// read, and takes a buffer once bytes came.
func (fr *reader) fill() {
	if fr.buf == nil {
		m, err := fr.body.Read(fr.idle[:])
		if m > 0 {
			fr.buf = append(getStreamBuf(), fr.idle[:m]...)
			fr.process()
		}
		fr.err = err
		return
	}
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

// process filters every complete value after scan and moves it, and the
// whitespace between values, to buf[:w]. It crosses strings with
// jsonscan.StringEnd, not byte by byte.
func (fr *reader) process() {
	b := fr.buf
	if fr.raw {
		fr.w = len(b)
		fr.start, fr.scan = len(b), len(b)
		return
	}
	i := fr.scan
	for i < len(b) {
		if fr.inString {
			if fr.escape { // the last read ended inside an escape
				fr.escape = false
				i++
				continue
			}
			end, escaped := jsonscan.StringEnd(b, i)
			if end < 0 {
				fr.escape = escaped
				i = len(b)
				break
			}
			fr.inString = false
			i = end
			continue
		}
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
				fr.passRaw(i)
				return
			}
		}
		switch c {
		case '"':
			fr.inString = true
		case '{', '[':
			fr.depth++
		case '}', ']':
			fr.depth--
			if fr.depth == 0 {
				// filtered in place: w <= start, and the value only shrinks
				fr.w += len(fr.filter.appendFiltered(b[fr.w:fr.w], b[fr.start:i+1], fr.keep))
				fr.start = i + 1
			}
		}
		i++
	}
	fr.scan = i
}

// passRaw gives up filtering at b[i]: the stream is not a sequence of
// objects.
func (fr *reader) passRaw(i int) {
	fr.raw = true
	fr.w = copy(fr.buf[fr.w:], fr.buf[i:]) + fr.w
	fr.buf = fr.buf[:fr.w]
	fr.start, fr.scan = fr.w, fr.w
}

// streamBufs are the buffers of the streams between two values: a watch
// takes one when the server sends, and gives it back once it was read.
// The pool holds array pointers: a Put of a slice would allocate.
var streamBufs = sync.Pool{New: func() any { return new([streamBufSize]byte) }}

const streamBufSize = 32 << 10

func getStreamBuf() []byte { return streamBufs.Get().(*[streamBufSize]byte)[:0] }

// putStreamBuf keeps b for the next stream when it is a pooled buffer
// that did not grow: a grown one goes to the garbage collector.
func putStreamBuf(b []byte) {
	if cap(b) == streamBufSize {
		streamBufs.Put((*[streamBufSize]byte)(b[:streamBufSize]))
	}
}
