package controlplane

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The embedded module must be what hack/controlplane pins; `go generate`
// copies it.
func TestEmbeddedModuleMatchesHack(t *testing.T) {
	pairs := map[string]string{
		"module/kube.go.mod":      "go.mod",
		"module/kube.go.sum":      "go.sum",
		"module/tools.go.txt":     "tools.go",
		"module/etcd.go.mod":      "etcd/go.mod",
		"module/etcd.go.sum":      "etcd/go.sum",
		"module/etcd_main.go.txt": "etcd/main.go",
	}
	for embedded, hack := range pairs {
		want, err := os.ReadFile(filepath.Join("..", "..", "hack", "controlplane", hack))
		require.NoError(t, err)
		got, err := moduleFS.ReadFile(embedded)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "%s is stale: run `go generate ./internal/controlplane`", embedded)
	}
}

func TestPinnedVersions(t *testing.T) {
	v := Pinned()
	assert.Regexp(t, `^v1\.37\.\d+$`, v.Kubernetes)
	assert.Regexp(t, `^v3\.6\.\d+$`, v.Etcd)
	assert.Equal(t, v.Kubernetes+"-etcd-"+v.Etcd, v.String())
}

func TestDirHonoursTheEnvironment(t *testing.T) {
	t.Setenv(EnvDir, "/somewhere/bin")
	d, err := Dir()
	require.NoError(t, err)
	assert.Equal(t, "/somewhere/bin", d)

	t.Setenv(EnvDir, "")
	t.Setenv("XDG_CACHE_HOME", "/cache")
	d, err = Dir()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join("/cache", "opgen", "controlplane", Pinned().String()), d)
}

func TestMissingBinariesAreNamedWithTheFix(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etcd"), []byte("#!/bin/sh\n"), 0o755))
	b := In(dir)
	assert.Equal(t, []string{b.APIServer, b.ControllerManager, b.Kubectl}, b.Missing())
	err := b.Check()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "make controlplane")
	assert.Contains(t, err.Error(), b.APIServer)
}

func TestTargetsSetTheServerVersion(t *testing.T) {
	kube := targets()[0]
	assert.Contains(t, kube.ldflags, "gitVersion="+Pinned().Kubernetes)
	assert.Contains(t, kube.ldflags, "gitMinor=37")
}

// TestWaitingForAnotherBuildSaysSo: while another holder has the build
// lock, lock says at once what it waits for, and gives up with ctx.
func TestWaitingForAnotherBuildSaysSo(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".build.lock")
	release, err := lock(context.Background(), path, io.Discard)
	require.NoError(t, err)
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = lock(ctx, path, &out)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, out.String(), "waiting for another process to finish building the control plane")
	release()
	again, err := lock(context.Background(), path, io.Discard)
	require.NoError(t, err, "the lock is free once released")
	again()
}
