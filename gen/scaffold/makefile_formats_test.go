package scaffold_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen/scaffold"
)

// TestMakefileManifestFormats runs make -n on the targets that write the
// kustomize layout and the Helm chart: each runs opgen manifests with its
// format, after go generate.
func TestMakefileManifestFormats(t *testing.T) {
	makePath, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed: install GNU make to run it")
	}
	dir := t.TempDir()
	_, err = scaffold.InitProject(dir, scaffold.ProjectOptions{Module: "example.com/hello-operator", OpgenVersion: "v0.3.0"})
	require.NoError(t, err)
	cmd := exec.Command(makePath, "-n", "GO=go", "IMG=registry.example.com/hello:v1", "kustomize", "chart")
	cmd.Dir = dir
	cmd.Env = makeEnv("PATH=/nonexistent")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	manifests := "go tool opgen manifests --format "
	flags := " --name hello-operator --namespace hello-operator-system --image registry.example.com/hello:v1"
	assert.Equal(t, "go generate ./...\n"+
		manifests+"kustomize"+flags+"\n"+
		manifests+"helm"+flags+" --out deploy/chart\n", string(out))
}

// makeEnv is this process's environment with extra added, less what an
// enclosing make (make test) passes to its children: a make run inside a
// test then prints what it prints on its own, without "Entering directory".
func makeEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); name == "MAKEFLAGS" || name == "MAKELEVEL" || name == "MFLAGS" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// TestMakefileImageAndMonitoring runs make -n on the targets that build
// the image (written, or pushed to IMG with PUSH=1) and write the
// manifest with the dashboard and alerts.
func TestMakefileImageAndMonitoring(t *testing.T) {
	makePath, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed: install GNU make to run it")
	}
	dir := t.TempDir()
	_, err = scaffold.InitProject(dir, scaffold.ProjectOptions{Module: "example.com/hello-operator", OpgenVersion: "v0.3.0"})
	require.NoError(t, err)
	run := func(args ...string) string {
		cmd := exec.Command(makePath, append([]string{"-n", "GO=go", "IMG=registry.example.com/hello:v1"}, args...)...)
		cmd.Dir = dir
		cmd.Env = makeEnv("PATH=/nonexistent")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	assert.Equal(t, "go generate ./...\ngo tool opgen image --name hello-operator --out bin/image\n", run("image"))
	assert.Equal(t, "go generate ./...\ngo tool opgen image --name hello-operator --push registry.example.com/hello:v1\n", run("image", "PUSH=1"))
	assert.Equal(t, "go generate ./...\ngo tool opgen manifests --name hello-operator --namespace hello-operator-system --image registry.example.com/hello:v1 --out deploy/hello-operator.yaml --monitoring deploy/monitoring\n", run("manifests"))
}
