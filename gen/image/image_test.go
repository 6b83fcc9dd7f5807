package image_test

import (
	"archive/tar"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen/dockerfile"
	"github.com/opgen-sdk/opgen/gen/image"
)

// tinyModule writes a module whose main prints its arguments: an operator
// stand-in that builds in seconds.
func tinyModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/tiny\n\ngo 1.26\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() { fmt.Println(\"tiny\", os.Args[1:]) }\n"), 0o644))
	return dir
}

func build(t *testing.T, opts image.Options) v1.ImageIndex {
	t.Helper()
	idx, err := image.Build(context.Background(), opts)
	require.NoError(t, err)
	return idx
}

func digest(t *testing.T, idx v1.ImageIndex) v1.Hash {
	t.Helper()
	d, err := idx.Digest()
	require.NoError(t, err)
	return d
}

// files reads the flattened file system of img: each regular file or
// directory by path, with its header and content.
func files(t *testing.T, img v1.Image) map[string]file {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	out := map[string]file{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		out[strings.TrimSuffix(h.Name, "/")] = file{h, data}
	}
}

type file struct {
	h    *tar.Header
	data []byte
}

// TestBaseHasTheUserAndTheCertificates: the base layer holds what a static
// binary needs: the user 65532 the Deployment runs as, and CA roots that
// crypto/x509 parses.
func TestBaseHasTheUserAndTheCertificates(t *testing.T) {
	t.Parallel()
	idx := build(t, image.Options{Name: "tiny", Dir: tinyModule(t), Platforms: []string{"linux/amd64"}})
	img := platformImage(t, idx, "amd64")
	fs := files(t, img)
	assert.Contains(t, string(fs["etc/passwd"].data), "nonroot:x:65532:65532:")
	assert.Contains(t, string(fs["etc/group"].data), "nonroot:x:65532:")
	assert.Equal(t, 65532, fs["home/nonroot"].h.Uid)
	assert.Equal(t, int64(0o1777), fs["tmp"].h.Mode)
	op := fs["operator"]
	assert.Equal(t, int64(0o755), op.h.Mode)
	assert.Equal(t, 0, op.h.Uid, "root owns the binary: the user runs it but cannot change it")

	pemData := fs[strings.TrimPrefix(image.CACertificates, "/")].data
	var roots int
	for block, rest := pem.Decode(pemData); block != nil; block, rest = pem.Decode(rest) {
		_, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		roots++
	}
	t.Logf("%d CA roots, %d bytes", roots, len(pemData))
	assert.Greater(t, roots, 100, "Mozilla's store holds well over a hundred roots")

	uid := dockerfile.NonRootUID
	assert.Equal(t, fmt.Sprintf("%d:%d", uid, uid), image.User, "the image runs as the Dockerfile's user")
}

// platformImage returns idx's image for arch.
func platformImage(t *testing.T, idx v1.ImageIndex, arch string) v1.Image {
	t.Helper()
	m, err := idx.IndexManifest()
	require.NoError(t, err)
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.Architecture == arch {
			img, err := idx.Image(d.Digest)
			require.NoError(t, err)
			return img
		}
	}
	t.Fatalf("no image for %s in the index", arch)
	return nil
}

// TestSameInputsSameDigest: two builds of the same sources are one
// digest; a different SOURCE_DATE_EPOCH is another.
func TestSameInputsSameDigest(t *testing.T) {
	t.Parallel()
	dir := tinyModule(t)
	opts := image.Options{Name: "tiny", Dir: dir, Platforms: []string{"linux/amd64"}}
	first, second := digest(t, build(t, opts)), digest(t, build(t, opts))
	assert.Equal(t, first, second)
	opts.Created = time.Unix(1700000000, 0)
	assert.NotEqual(t, first, digest(t, build(t, opts)), "the timestamp is part of the image")
}

// TestLayoutAndArchive: the OCI layout reads back as the index built, and
// an existing directory that is not a layout is not replaced.
func TestLayoutAndArchive(t *testing.T) {
	t.Parallel()
	idx := build(t, image.Options{Name: "tiny", Dir: tinyModule(t), Platforms: []string{"linux/amd64"}})
	dir := filepath.Join(t.TempDir(), "image")
	require.NoError(t, image.WriteLayout(dir, idx, "tiny:dev"))
	require.NoError(t, image.WriteLayout(dir, idx, "tiny:dev"), "a layout is replaced")
	p, err := layout.FromPath(dir)
	require.NoError(t, err)
	top, err := p.ImageIndex()
	require.NoError(t, err)
	m, err := top.IndexManifest()
	require.NoError(t, err)
	require.Len(t, m.Manifests, 1)
	assert.Equal(t, digest(t, idx), m.Manifests[0].Digest)
	assert.Equal(t, "tiny:dev", m.Manifests[0].Annotations["org.opencontainers.image.ref.name"])

	archive := filepath.Join(t.TempDir(), "image.tar")
	require.NoError(t, image.WriteArchive(archive, idx, ""))
	out, err := exec.Command("tar", "-tf", archive).CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "index.json")

	project := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(project, "go.mod"), nil, 0o644))
	err = image.WriteLayout(project, idx, "")
	assert.ErrorContains(t, err, "is not an OCI layout")
	assert.FileExists(t, filepath.Join(project, "go.mod"))
}

func TestOptionsAreChecked(t *testing.T) {
	_, err := image.Build(context.Background(), image.Options{Platforms: []string{"windows/amd64"}})
	assert.ErrorContains(t, err, "pass --name")
	assert.ErrorContains(t, err, `platform "windows/amd64"`)
	t.Setenv(image.EnvSourceDateEpoch, "yesterday")
	_, err = image.CreatedFromEnv()
	assert.ErrorContains(t, err, "not a number of seconds")
}
