package cachefill

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"
)

// memberStream is a streamed list's watch as the API server gzips it
// when each flush carries one event: 2,000 events of about 2 KB, a gzip
// member each.
func memberStream() []byte {
	ev := `{"type":"ADDED","object":{"metadata":{"name":"x","namespace":"ns","labels":{"a":"b"}},"spec":{"v":"` + strings.Repeat("q", 2000) + `"}}}` + "\n"
	var out bytes.Buffer
	for range 2000 {
		zw := gzip.NewWriter(&out)
		_, _ = io.WriteString(zw, ev)
		_ = zw.Close()
	}
	return out.Bytes()
}

// BenchmarkGunzipMembers reads the stream with Go's gzip reader (what
// Go's transport uses when it asked for gzip itself: one decompressor
// kept for the stream's life) and with gunzip (one taken from a pool per
// member), side by side.
func BenchmarkGunzipMembers(b *testing.B) {
	data := memberStream()
	b.Run("go", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, zr); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gunzip", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := io.Copy(io.Discard, &gunzip{body: io.NopCloser(bytes.NewReader(data))}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
