package cachefill

import (
	"bufio"
	"compress/gzip"
	"io"
	"net/http"
	"sync"
)

// AskGzip returns req asking for a gzipped answer when it fills a cache
// and asks for no encoding itself, and reports whether it did: the
// operator's transport then decompresses the answer with Gunzip, instead
// of Go's transport.
//
// Why: the API server gzips a streamed list's watch (WatchList, client-go's
// default), one gzip member per flush, and Go's transport keeps a
// decompressor (about 45 KiB) for the stream's whole life, even while the
// watch waits. Gunzip holds one only while a member is being read. A
// sharded member has a watch per bucket it holds.
func AskGzip(req *http.Request) (*http.Request, bool) {
	if req.Method != http.MethodGet || !Filling(req.Context()) ||
		req.Header.Get("Accept-Encoding") != "" || req.Header.Get("Range") != "" {
		return req, false
	}
	out := req.Clone(req.Context())
	out.Header.Set("Accept-Encoding", "gzip")
	return out, true
}

// Gunzip decompresses resp's body as it is read when the server gzipped
// it, and then drops the Content-Encoding, as Go's transport does with
// the answers it asked gzip for.
func Gunzip(resp *http.Response) {
	if resp.Header.Get("Content-Encoding") != "gzip" {
		return
	}
	resp.Body = &gunzip{body: resp.Body}
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	resp.Uncompressed = true
}

// gunzip reads a stream of gzip members. Between two members it holds no
// decompressor and no buffer: it waits for the server with a one-byte
// read, then takes both from pools.
type gunzip struct {
	body  io.ReadCloser
	in    *bufio.Reader // nil between members when nothing is buffered
	zr    *gzip.Reader  // nil between members
	first prefixed      // the byte that ended a wait, then body
	err   error
}

var (
	gzipReaders sync.Pool // of *gzip.Reader
	gzipInputs  = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}
)

func (g *gunzip) Read(p []byte) (int, error) {
	for {
		if g.zr != nil {
			n, err := g.zr.Read(p)
			if err != io.EOF {
				return n, err
			}
			g.endMember()
			if n > 0 {
				return n, nil
			}
			continue
		}
		if g.err != nil {
			return 0, g.err
		}
		if err := g.beginMember(); err != nil {
			g.err = err
			return 0, err
		}
	}
}

// beginMember waits for the next member and reads its header.
func (g *gunzip) beginMember() error {
	if g.in == nil {
		n, err := g.body.Read(g.first.b[:])
		if n == 0 {
			if err == nil {
				return nil // nothing yet: Read asks again
			}
			return err // io.EOF between members: the stream's end
		}
		g.first = prefixed{b: g.first.b, n: n, r: g.body}
		g.in = gzipInputs.Get().(*bufio.Reader)
		g.in.Reset(&g.first)
	}
	var err error
	if zr, ok := gzipReaders.Get().(*gzip.Reader); ok {
		err = zr.Reset(g.in)
		g.zr = zr
	} else {
		g.zr, err = gzip.NewReader(g.in)
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF // bytes came, and no whole header
		}
		g.zr = nil
		return err
	}
	g.zr.Multistream(false)
	return nil
}

// endMember gives the decompressor back, and the input buffer when it
// holds none of the next member.
func (g *gunzip) endMember() {
	gzipReaders.Put(g.zr)
	g.zr = nil
	if g.in.Buffered() == 0 {
		g.in.Reset(nil)
		gzipInputs.Put(g.in)
		g.in = nil
	}
}

// Close closes the body. It may come while another goroutine reads (a
// watch stopped while it waits), so it leaves the decompressor and the
// input buffer to that reader: what a member holds at a Close is the
// garbage collector's.
func (g *gunzip) Close() error { return g.body.Close() }

// prefixed reads the n bytes of b, then r.
type prefixed struct {
	b [1]byte
	n int
	r io.Reader
}

func (p *prefixed) Read(out []byte) (int, error) {
	if p.n > 0 {
		n := copy(out, p.b[:p.n])
		p.n -= n
		return n, nil
	}
	return p.r.Read(out)
}
