package scaffold_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNewProjectTestsPassUntouched is what a new user does: opgen init,
// opgen create api, go generate, go test ./... — in a new module that
// replaces opgen with this checkout. The scaffolded test of the kind must
// run against the local control plane and pass with no edit.
func TestNewProjectTestsPassUntouched(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and tests a new project (about a minute); run without -short")
	}
	_, file, _, _ := runtime.Caller(0)
	repo, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
	require.NoError(t, err)
	bin := t.TempDir()
	dir := filepath.Join(t.TempDir(), "kit-demo")
	require.NoError(t, os.Mkdir(dir, 0o755))

	run := func(name string, args ...string) string {
		t.Helper()
		if name == "opgen" {
			name = filepath.Join(bin, "opgen")
		}
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GOFLAGS=")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
		return string(out)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "opgen"), "./cmd/opgen")
	build.Dir = repo
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build opgen:\n%s", out)

	run("opgen", "init", "--module", "example.com/kit-demo", "--replace", repo)
	run("opgen", "create", "api", "--group", "demo.example.com", "--version", "v1", "--kind", "Widget")
	run("opgen", "create", "api", "--group", "demo.example.com", "--version", "v1", "--kind", "Region", "--cluster-scoped")
	run("go", "generate", "./...")
	out2 := run("go", "test", "-count=1", "-v", "./internal/controller/")
	require.Contains(t, out2, "--- PASS: TestWidgetIsHandled")
	require.Contains(t, out2, "--- PASS: TestRegionIsHandled")

	// A user adds required fields: the test, untouched, still passes, its
	// object built from the new CRD.
	types := filepath.Join(dir, "apis", "demo", "v1", "widget_types.go")
	src, err := os.ReadFile(types)
	require.NoError(t, err)
	edited := strings.Replace(string(src), "type WidgetSpec struct {\n", "type WidgetSpec struct {\n"+
		"\t// +kubebuilder:validation:Minimum=1\n\tReplicas int32 `json:\"replicas\"`\n"+
		"\t// +kubebuilder:validation:MinLength=3\n\tOwner string `json:\"owner\"`\n", 1)
	require.NotEqual(t, string(src), edited, "no WidgetSpec in %s", types)
	require.NoError(t, os.WriteFile(types, []byte(edited), 0o644))
	run("go", "generate", "./...")
	out3 := run("go", "test", "-count=1", "-v", "-run", "TestWidgetIsHandled", "./internal/controller/")
	require.Contains(t, out3, "--- PASS: TestWidgetIsHandled")
	// The rest of the module builds and vets with the scaffolded tests.
	run("go", "vet", "./...")
}
