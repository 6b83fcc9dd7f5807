// Package watchjson decodes a watch stream of JSON events straight into a
// typed object, in one pass over each event.
//
// client-go's watch decoder is general: it frames the stream with
// encoding/json's scanner, sniffs the apiVersion and kind of the event
// and again of its object (a second full scan each), copies the object's
// bytes out of the event, then decodes them. For a controller's own kind
// the type is known, so Decoder frames an event with a plain scan of its
// braces and decodes it with the same JSON library and options client-go
// uses, once. The objects it returns are those client-go's typed client
// returns: the same fields, TypeMeta empty.
package watchjson

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	sigsjson "sigs.k8s.io/json"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/jsonscan"
)

// Decoder is a watch.Decoder of a stream of JSON watch events whose
// objects are Ts (or a metav1.Status for an ERROR event).
type Decoder[T runtime.Object] struct {
	body   io.ReadCloser
	frames frames
}

// NewDecoder returns the decoder of body, which it closes on Close.
func NewDecoder[T runtime.Object](body io.ReadCloser) *Decoder[T] {
	return &Decoder[T]{body: body, frames: frames{r: body}}
}

// event is a watch event whose object decodes as T.
type event[T any] struct {
	Type   watch.EventType `json:"type"`
	Object T               `json:"object"`
}

// Decode returns the next event. At the end of the stream it returns
// io.EOF; a stream cut inside an event is io.ErrUnexpectedEOF.
func (d *Decoder[T]) Decode() (watch.EventType, runtime.Object, error) {
	frame, err := d.frames.next()
	if err != nil {
		return "", nil, err
	}
	var ev event[T]
	err = sigsjson.UnmarshalCaseSensitivePreserveInts(frame, &ev)
	if err != nil || ev.Type == watch.Error {
		// An ERROR event's object is a Status, which need not decode as
		// a T ("status": "Failure" where T has a status struct).
		var st event[*metav1.Status]
		if stErr := sigsjson.UnmarshalCaseSensitivePreserveInts(frame, &st); stErr == nil && st.Type == watch.Error && st.Object != nil {
			return watch.Error, st.Object, nil
		}
	}
	if err != nil {
		return "", nil, fmt.Errorf("decode a watch event: %w", err)
	}
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
	case watch.Error:
		return "", nil, errors.New("decode the status of a watch's ERROR event: it has none")
	default:
		return "", nil, fmt.Errorf("got invalid watch event type: %q", ev.Type)
	}
	var zero T
	if any(ev.Object) == any(zero) {
		return "", nil, fmt.Errorf("a watch event of type %s has no object", ev.Type)
	}
	// As client-go's typed clients return them.
	ev.Object.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return ev.Type, ev.Object, nil
}

// Close closes the stream.
func (d *Decoder[T]) Close() { _ = d.body.Close() }

// frames splits a stream into its top-level JSON objects, with or
// without whitespace between them.
//
// It holds a buffer only while bytes are in it: a watch that waits for
// the server (most of a watch's life) holds none.
type frames struct {
	r   io.Reader
	buf []byte // buf[start:] is read and not returned yet; nil when idle
	// start is where the next frame begins in buf.
	start int
	err   error
	idle  [64]byte
}

// next returns the next object; it stays valid until the next call. It
// crosses strings with jsonscan.StringEnd, not byte by byte, and moves
// the bytes not returned yet to the front of buf only before it reads
// more, so that buf grows only for an event larger than it.
func (f *frames) next() ([]byte, error) {
	for f.start < len(f.buf) && isSpace(f.buf[f.start]) {
		f.start++
	}
	if f.buf != nil && f.start == len(f.buf) {
		putFrameBuf(f.buf)
		f.buf, f.start = nil, 0
	}
	depth, inString, escaped, begin := 0, false, false, -1
	i := f.start
	for {
		if i == len(f.buf) {
			switch {
			case f.err == io.EOF && begin >= 0:
				return nil, io.ErrUnexpectedEOF
			case f.err != nil:
				return nil, f.err
			}
			if f.start > 0 { // the whitespace between events is not kept
				n := copy(f.buf, f.buf[f.start:])
				i -= f.start
				if begin >= 0 {
					begin -= f.start
				}
				f.buf, f.start = f.buf[:n], 0
			}
			f.fill()
			continue // scan what came, or read again if nothing did
		}
		if inString {
			if escaped { // the last read ended inside an escape
				escaped = false
				i++
				continue
			}
			end, esc := jsonscan.StringEnd(f.buf, i)
			if end < 0 {
				escaped, i = esc, len(f.buf)
				continue
			}
			inString, i = false, end
			continue
		}
		c := f.buf[i]
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth == 0 {
				begin = i
			}
			depth++
		case '}', ']':
			depth--
			if depth == 0 && begin >= 0 {
				f.start = i + 1
				return f.buf[begin : i+1], nil
			}
			if depth < 0 {
				return nil, fmt.Errorf("a watch stream has an unbalanced %q at byte %d", c, i)
			}
		case ' ', '\t', '\r', '\n':
		default:
			if depth == 0 {
				return nil, fmt.Errorf("a watch stream has %q outside of an event", c)
			}
		}
		i++
	}
}

// fill reads more of the stream into buf, growing it when full. Without
// a buffer it waits for the server with a small read, and takes a buffer
// once bytes came.
func (f *frames) fill() {
	if f.buf == nil {
		n, err := f.r.Read(f.idle[:])
		if n > 0 {
			f.buf = append(getFrameBuf(), f.idle[:n]...)
		}
		if err != nil {
			f.err = err
		}
		return
	}
	if len(f.buf) == cap(f.buf) {
		f.buf = append(f.buf, make([]byte, cap(f.buf))...)[:len(f.buf)]
	}
	n, err := f.r.Read(f.buf[len(f.buf):cap(f.buf)])
	f.buf = f.buf[:len(f.buf)+n]
	if err != nil {
		f.err = err
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// frameBufs are the buffers of the streams between two events. The pool
// holds array pointers: a Put of a slice would allocate.
var frameBufs = sync.Pool{New: func() any { return new([frameBufSize]byte) }}

const frameBufSize = 16 << 10

func getFrameBuf() []byte { return frameBufs.Get().(*[frameBufSize]byte)[:0] }

// putFrameBuf keeps b for the next stream when it is a pooled buffer that
// did not grow: a grown one goes to the garbage collector.
func putFrameBuf(b []byte) {
	if cap(b) == frameBufSize {
		frameBufs.Put((*[frameBufSize]byte)(b[:frameBufSize]))
	}
}

// Watch watches resource in namespace ("" for all, or for a
// cluster-scoped resource) through c, as client-go's generated list-watch
// does (cache.NewListWatchFromClient with every field), and decodes its
// events with a Decoder. Like client-go's Request.Watch, a connection cut
// before the stream began (an EOF, a timeout) is an empty watch, which the
// reflector starts again.
func Watch[T runtime.Object](ctx context.Context, c rest.Interface, resource, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	body, err := c.Get().Namespace(namespace).Resource(resource).
		VersionedParams(&opts, metav1.ParameterCodec).SetHeader("Accept", "application/json").Stream(ctx)
	if err != nil {
		if utilnet.IsProbableEOF(err) || utilnet.IsTimeout(err) {
			return watch.NewEmptyWatch(), nil
		}
		return nil, err
	}
	return watch.NewStreamWatcherWithLogger(klog.FromContext(ctx), NewDecoder[T](body),
		// 500: the cause of a decoding error is unknown, as client-go says.
		apierrors.NewClientErrorReporter(http.StatusInternalServerError, "GET", "ClientWatchDecoding")), nil
}
