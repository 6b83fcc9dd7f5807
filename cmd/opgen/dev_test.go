package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/cmd/opgen/internal/devcmd"
)

// TestDevHelpAnywhere: opgen dev --help prints the control plane's flags
// outside any Go module, without building the control plane (which needs
// a module that requires opgen).
func TestDevHelpAnywhere(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "opgen")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	outside := t.TempDir()
	for _, help := range []string{"--help", "-h"} {
		cmd := exec.Command(bin, "dev", help)
		cmd.Dir = outside
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GO111MODULE=", "XDG_CACHE_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "opgen dev %s in %s: %s", help, outside, out)
		for _, want := range []string{"Usage:", "--crds", "--kubeconfig", "--no-fake-kubelet", "--webhooks"} {
			assert.Contains(t, string(out), want, help)
		}
		assert.NotContains(t, string(out), "go build", help)
	}
}

// TestDevWantsHelp: help is asked before "--" only.
func TestDevWantsHelp(t *testing.T) {
	t.Parallel()
	assert.True(t, devcmd.WantsHelp([]string{"--crds", "config/crd", "--help"}))
	assert.True(t, devcmd.WantsHelp([]string{"-h"}))
	assert.False(t, devcmd.WantsHelp([]string{"--crds", "config/crd"}))
	assert.False(t, devcmd.WantsHelp([]string{"--", "--help"}))
}
