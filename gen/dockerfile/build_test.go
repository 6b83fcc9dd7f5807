package dockerfile_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen/dockerfile"
)

// builder returns the command that builds a context directory with a
// Dockerfile into an image tarball without a long-running daemon of ours:
// BuildKit's buildctl-daemonless.sh (it starts a rootless buildkitd for the
// one build), or a docker CLI whose daemon answers. The reason says what is
// missing when there is none.
func builder(ctx context.Context) (build func(dir, out string) *exec.Cmd, reason string) {
	if p, err := exec.LookPath("buildctl-daemonless.sh"); err == nil {
		return func(dir, out string) *exec.Cmd {
			return exec.CommandContext(ctx, p, "build", "--frontend", "dockerfile.v0",
				"--local", "context="+dir, "--local", "dockerfile="+dir,
				"--output", "type=docker,name=opgen-dockerfile-test,dest="+out)
		}, ""
	}
	if p, err := exec.LookPath("docker"); err == nil {
		v, err := exec.CommandContext(ctx, p, "version", "--format", "{{.Server.Version}}").Output()
		if err == nil && strings.TrimSpace(string(v)) != "" {
			return func(dir, out string) *exec.Cmd {
				return exec.CommandContext(ctx, p, "build", "--output", "type=tar,dest="+out, dir)
			}, ""
		}
		return nil, "the docker CLI is installed but no daemon answers"
	}
	return nil, "neither buildctl-daemonless.sh (BuildKit with rootless buildkitd and rootlesskit) nor a docker daemon is available"
}

// TestDockerfileBuilds builds the generated Dockerfile for a one-file
// module and checks the image holds the binary. It is skipped where no
// builder is available: the moby/buildkit module in go.mod is used only
// for its Dockerfile parser (TestDockerfileParsesAsAMinimalNonRootBuild),
// and building needs BuildKit's daemon (buildkitd) with a container
// runtime plus the golang and distroless base images from a registry.
// Install BuildKit's rootless binaries (buildctl, buildkitd,
// buildctl-daemonless.sh, rootlesskit) or give docker a daemon, with
// registry access, to unskip it.
func TestDockerfileBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: building an image pulls base images; run without -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	build, reason := builder(ctx)
	if build == nil {
		t.Skip("no daemonless image builder: " + reason)
	}
	dir := t.TempDir()
	data, err := dockerfile.Build(dockerfile.Options{Main: "."})
	require.NoError(t, err)
	files := map[string]string{
		"Dockerfile": string(data),
		"go.mod":     "module example.com/op\n\ngo 1.26\n",
		"go.sum":     "",
		"main.go":    "package main\n\nfunc main() { println(\"operator\") }\n",
	}
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600))
	}
	out := filepath.Join(t.TempDir(), "image.tar")
	t.Log("building the generated Dockerfile (pulls golang and distroless; can take minutes)")
	cmd := build(dir, out)
	logs, err := cmd.CombinedOutput()
	require.NoError(t, err, "build failed:\n%s", logs)
	st, err := os.Stat(out)
	require.NoError(t, err)
	require.Positive(t, st.Size())
}
