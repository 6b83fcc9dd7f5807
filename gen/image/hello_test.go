package image_test

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen/image"
)

// TestHelloOperatorImage builds hello-operator's image for amd64 and
// arm64, pushes it to a registry served in-process, pulls it back and
// checks what the Deployment relies on: the user, the entrypoint, the
// labels, both platforms, and a binary that runs. A second build must
// give the same digest.
func TestHelloOperatorImage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two cross-builds of hello-operator take minutes on 2 cores while the Go build cache is cold for -trimpath and arm64; run without -short")
	}
	t.Parallel()
	opts := image.Options{Name: "hello-operator", Dir: "../../examples/hello-operator", Progress: testWriter{t}}
	start := time.Now()
	idx := build(t, opts)
	t.Logf("first build: %s", time.Since(start).Round(100*time.Millisecond))

	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	host := strings.TrimPrefix(reg.URL, "http://")
	pushed, err := image.Push(context.Background(), idx, host+"/hello-operator:test")
	require.NoError(t, err)
	t.Logf("pushed %s", pushed)
	require.True(t, strings.HasPrefix(pushed, host+"/hello-operator:test@sha256:"), pushed)

	ref, err := name.ParseReference(pushed)
	require.NoError(t, err)
	pulled, err := remote.Index(ref)
	require.NoError(t, err)
	assert.Equal(t, digest(t, idx), digest(t, pulled), "the registry serves what was built")
	checkPlatforms(t, pulled)
	for _, arch := range []string{"amd64", "arm64"} {
		checkConfig(t, platformImage(t, pulled, arch), arch)
	}
	runVersion(t, platformImage(t, pulled, "amd64"))

	start = time.Now()
	again := build(t, opts)
	t.Logf("second build: %s", time.Since(start).Round(100*time.Millisecond))
	assert.Equal(t, digest(t, idx), digest(t, again), "two builds of the same sources give one digest")
}

func checkPlatforms(t *testing.T, idx v1.ImageIndex) {
	t.Helper()
	m, err := idx.IndexManifest()
	require.NoError(t, err)
	var platforms []string
	for _, d := range m.Manifests {
		platforms = append(platforms, d.Platform.String())
		img, err := idx.Image(d.Digest)
		require.NoError(t, err)
		size := int64(0)
		layers, err := img.Layers()
		require.NoError(t, err)
		for _, l := range layers {
			s, err := l.Size()
			require.NoError(t, err)
			size += s
		}
		t.Logf("%s: %s, %d layers, %.1f MiB compressed", d.Platform, d.Digest, len(layers), float64(size)/(1<<20))
	}
	assert.Equal(t, []string{"linux/amd64", "linux/arm64"}, platforms)
	assert.Equal(t, "hello-operator", m.Annotations["org.opencontainers.image.title"])
}

func checkConfig(t *testing.T, img v1.Image, arch string) {
	t.Helper()
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, arch, cf.Architecture)
	assert.Equal(t, "65532:65532", cf.Config.User)
	assert.Equal(t, []string{"/operator"}, cf.Config.Entrypoint)
	labels := cf.Config.Labels
	assert.Equal(t, "hello-operator", labels["org.opencontainers.image.title"])
	assert.Equal(t, "1970-01-01T00:00:00Z", labels["org.opencontainers.image.created"])
	assert.Equal(t, "github.com/opgen-sdk/opgen/examples/hello-operator", labels[image.MainLabel])
	assert.Equal(t, goruntime.Version(), labels[image.GoLabel])
	assert.Regexp(t, `(?m)^k8s\.io/client-go v0\.37\.\d+ h1:`, labels[image.ModulesLabel], "the modules linked, with their sums")
}

// runVersion extracts the binary and runs it with --version, on an
// amd64 Linux host.
func runVersion(t *testing.T, img v1.Image) {
	t.Helper()
	bin := files(t, img)["operator"]
	if goruntime.GOOS != "linux" || goruntime.GOARCH != "amd64" {
		t.Logf("not running the amd64 binary on %s/%s", goruntime.GOOS, goruntime.GOARCH)
		return
	}
	path := filepath.Join(t.TempDir(), "operator")
	require.NoError(t, os.WriteFile(path, bin.data, 0o755))
	out, err := exec.Command(path, "--version").CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, "github.com/opgen-sdk/opgen/examples/hello-operator (devel) "+goruntime.Version()+" linux/amd64\n", string(out))
}

// testWriter sends the build's progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
