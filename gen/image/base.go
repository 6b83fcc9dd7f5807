package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/pem"
	"io"
	"os"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// CACertificates is where the base puts the CA bundle: the first file Go's
// crypto/x509 reads on Linux, and where distroless keeps it.
const CACertificates = "/etc/ssl/certs/ca-certificates.crt"

// entry is one file or directory of a layer.
type entry struct {
	name     string // without the leading slash
	mode     int64
	uid, gid int
	data     []byte // nil for a directory
}

// baseFiles are the base layer's files: what a static Go binary needs of
// an operating system. The user and group 65532 are distroless's nonroot,
// so that the Deployment's runAsNonRoot holds and files the operator
// writes (none, with a read-only root) have a name.
func baseFiles() []entry {
	const nonroot = 65532
	return []entry{
		{name: "etc/", mode: 0o755},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/ssl/", mode: 0o755},
		{name: "etc/ssl/certs/", mode: 0o755},
		{name: strings.TrimPrefix(CACertificates, "/"), mode: 0o644, data: caBundle()},
		{name: "home/", mode: 0o755},
		{name: "home/nonroot/", mode: 0o700, uid: nonroot, gid: nonroot},
		{name: "tmp/", mode: 0o1777},
	}
}

// caBundle is the PEM of the roots in golang.org/x/crypto's fallback
// bundle (Mozilla's NSS store), at the version go.mod pins: the same bytes
// on every machine, unlike the system's pool. Roots with a constraint
// (distrusted after a date) are left out, since PEM cannot say so.
func caBundle() []byte {
	var b bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate})
	}
	return b.Bytes()
}

func baseLayer(created time.Time) (v1.Layer, error) {
	return layerOf(baseFiles(), created)
}

// binaryLayer is the operator binary at Entrypoint, owned by root and
// executable by all, so that the non-root user runs but cannot change it.
func binaryLayer(path string, created time.Time) (v1.Layer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return layerOf([]entry{{name: strings.TrimPrefix(Entrypoint, "/"), mode: 0o755, data: data}}, created)
}

// layerOf writes entries, in their order, into a gzip-compressed OCI layer
// whose every header carries created and no owner names: the bytes depend
// on the entries alone.
func layerOf(entries []entry, created time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: created, Format: tar.FormatPAX}
		if e.data == nil {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.DefaultCompression), tarball.WithCompressedCaching)
}
