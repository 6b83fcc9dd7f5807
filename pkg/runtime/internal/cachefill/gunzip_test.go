package cachefill

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gzipMembers gzips each event as a member of its own, as the API server
// writes a streamed list's watch: one member per flush.
func gzipMembers(t *testing.T, events ...string) [][]byte {
	t.Helper()
	out := make([][]byte, len(events))
	for i, ev := range events {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, err := io.WriteString(zw, ev)
		require.NoError(t, err)
		require.NoError(t, zw.Close())
		out[i] = b.Bytes()
	}
	return out
}

// chunked returns each chunk in reads of its own, and calls next before
// the first read of every chunk but the first.
type chunked struct {
	chunks [][]byte
	next   func()
}

func (c *chunked) Read(p []byte) (int, error) {
	for len(c.chunks) > 0 && len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
		if len(c.chunks) > 0 && c.next != nil {
			c.next()
		}
	}
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	c.chunks[0] = c.chunks[0][n:]
	return n, nil
}

func TestGunzipHoldsNothingBetweenMembers(t *testing.T) {
	events := []string{`{"type":"ADDED","object":{"metadata":{"name":"a"}}}`, strings.Repeat(`{"type":"MODIFIED"}`, 3000), `{"type":"DELETED"}`}
	g := &gunzip{}
	waits := 0
	g.body = io.NopCloser(&chunked{chunks: gzipMembers(t, events...), next: func() {
		waits++
		assert.Nil(t, g.zr, "no decompressor is held while the stream waits for the next member")
		assert.Nil(t, g.in, "no input buffer is held while the stream waits for the next member")
	}})
	got, err := io.ReadAll(g)
	require.NoError(t, err)
	assert.Equal(t, strings.Join(events, ""), string(got))
	assert.Equal(t, 2, waits)
}

func TestGunzipReads(t *testing.T) {
	events := []string{`{"a":1}`, strings.Repeat("x", 70<<10), `{"c":3}`}
	whole := bytes.Join(gzipMembers(t, events...), nil)
	for name, wrap := range map[string]func(io.Reader) io.Reader{
		"whole": func(r io.Reader) io.Reader { return r },
		"bytes": iotest.OneByteReader,
		"half":  iotest.HalfReader,
	} {
		g := &gunzip{body: io.NopCloser(wrap(bytes.NewReader(whole)))}
		got, err := io.ReadAll(iotest.HalfReader(g))
		require.NoError(t, err, name)
		assert.Equal(t, strings.Join(events, ""), string(got), name)
		require.NoError(t, g.Close())
	}

	cut := whole[:len(whole)-5]
	_, err := io.ReadAll(&gunzip{body: io.NopCloser(bytes.NewReader(cut))})
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "a stream cut inside a member")
	_, err = io.ReadAll(&gunzip{body: io.NopCloser(strings.NewReader(`{"not":"gzip"}`))})
	assert.ErrorIs(t, err, gzip.ErrHeader)
	got, err := io.ReadAll(&gunzip{body: io.NopCloser(strings.NewReader(""))})
	require.NoError(t, err, "an empty stream is an empty body")
	assert.Empty(t, got)
}

// TestGunzipClosedWhileReading: a watch is stopped (Close) while its
// reader waits inside a member; the reader gets the body's error, and
// Close leaves its buffers alone (-race checks it).
func TestGunzipClosedWhileReading(t *testing.T) {
	member := gzipMembers(t, strings.Repeat(`{"type":"ADDED"}`, 500))[0]
	pr, pw := io.Pipe()
	g := &gunzip{body: pr}
	read := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(g)
		read <- err
	}()
	// A pipe's Write returns once the reader took every byte: the reader
	// is then inside the member, waiting for the rest.
	_, err := pw.Write(member[:len(member)/2])
	require.NoError(t, err)
	require.NoError(t, g.Close())
	assert.ErrorIs(t, <-read, io.ErrClosedPipe)
}

func TestAskGzip(t *testing.T) {
	req, err := http.NewRequestWithContext(Fill(context.Background()), http.MethodGet, "http://server/api/v1/pods?watch=true", nil)
	require.NoError(t, err)
	asked, ok := AskGzip(req)
	require.True(t, ok)
	assert.Equal(t, "gzip", asked.Header.Get("Accept-Encoding"))
	assert.Empty(t, req.Header.Get("Accept-Encoding"), "the caller's request is left alone")

	mine, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://server/api/v1/pods", nil)
	require.NoError(t, err)
	_, ok = AskGzip(mine)
	assert.False(t, ok, "a handler's own read is Go's transport's to compress")
	req.Header.Set("Accept-Encoding", "identity")
	_, ok = AskGzip(req)
	assert.False(t, ok, "an encoding the client chose is kept")

	resp := &http.Response{Header: http.Header{"Content-Encoding": {"gzip"}, "Content-Length": {"42"}}, ContentLength: 42,
		Body: io.NopCloser(bytes.NewReader(gzipMembers(t, "{}")[0]))}
	Gunzip(resp)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, "{}", string(body))
	assert.Empty(t, resp.Header.Get("Content-Encoding"))
	assert.Equal(t, int64(-1), resp.ContentLength)
}

// TestFilterReaderHoldsNothingWhileWaiting: a watch's filter gives its
// buffer back once a whole event was read, before it waits for the next.
func TestFilterReaderHoldsNothingWhileWaiting(t *testing.T) {
	events := []string{`{"type":"ADDED","object":{"metadata":{"name":"a","managedFields":[{"manager":"y"}]}}}`, "\n", `{"type":"DELETED","object":{"metadata":{"name":"a"}}}`}
	r := &reader{filter: NewFilter("op")}
	waits := 0
	r.body = io.NopCloser(&chunked{chunks: [][]byte{[]byte(events[0]), []byte(events[1]), []byte(events[2])}, next: func() {
		waits++
		assert.Nil(t, r.buf, "no buffer is held while the watch waits")
	}})
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, `{"type":"ADDED","object":{"metadata":{"name":"a"}}}`+"\n"+events[2], string(got))
	assert.Equal(t, 2, waits)
}
