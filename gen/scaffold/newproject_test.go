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
	p := initProject(t, "kit-demo")
	p.run("opgen", "create", "api", "--group", "demo.example.com", "--version", "v1", "--kind", "Widget")
	p.run("opgen", "create", "api", "--group", "demo.example.com", "--version", "v1", "--kind", "Region", "--cluster-scoped")
	p.run("go", "generate", "./...")
	out2 := p.run("go", "test", "-count=1", "-v", "./internal/controller/")
	require.Contains(t, out2, "--- PASS: TestWidgetIsHandled")
	require.Contains(t, out2, "--- PASS: TestRegionIsHandled")

	// A user adds required fields: the test, untouched, still passes, its
	// object built from the new CRD.
	p.edit("apis/demo/v1/widget_types.go", "type WidgetSpec struct {\n", "type WidgetSpec struct {\n"+
		"\t// +kubebuilder:validation:Minimum=1\n\tReplicas int32 `json:\"replicas\"`\n"+
		"\t// +kubebuilder:validation:MinLength=3\n\tOwner string `json:\"owner\"`\n")
	p.run("go", "generate", "./...")
	out3 := p.run("go", "test", "-count=1", "-v", "-run", "TestWidgetIsHandled", "./internal/controller/")
	require.Contains(t, out3, "--- PASS: TestWidgetIsHandled")
	// A status without observedGeneration: the scaffolded test still
	// compiles and passes.
	p.edit("apis/demo/v1/region_types.go", "\t// Status records the observed generation and the conditions.\n\tapis.Status `json:\",inline\"`\n", "\tZone string `json:\"zone,omitempty\"`\n")
	p.edit("apis/demo/v1/region_types.go", "\t\"github.com/opgen-sdk/opgen/apis\"\n", "")
	p.run("go", "generate", "./...")
	out4 := p.run("go", "test", "-count=1", "-v", "-run", "TestRegionIsHandled", "./internal/controller/")
	require.Contains(t, out4, "--- PASS: TestRegionIsHandled")
	// The rest of the module builds and vets with the scaffolded tests.
	p.run("go", "vet", "./...")
}

// TestNewProjectWithTwoVersionsNeedsNoOtherCommand: a kind in two
// versions whose schemas differ gets conversions and their round-trip
// tests, which import modules a new project's go.mod does not require;
// go generate (twice), go build and go test pass with no other command.
func TestNewProjectWithTwoVersionsNeedsNoOtherCommand(t *testing.T) {
	p := initProject(t, "conv-demo")
	p.run("opgen", "create", "api", "--group", "demo.example.com", "--version", "v1", "--kind", "Widget")
	p.run("opgen", "create", "api", "--group", "demo.example.com", "--version", "v2", "--kind", "Widget")
	p.edit("apis/demo/v1/widget_types.go", "type WidgetSpec struct {\n", "type WidgetSpec struct {\n"+
		"\t// +kubebuilder:validation:Maximum=10\n\t// +optional\n\tReplicas int32 `json:\"replicas,omitempty\"`\n")
	p.edit("apis/demo/v1/widget_types.go", "// +opgen:controller\n", "// +kubebuilder:storageversion\n// +opgen:controller\n")
	p.edit("apis/demo/v2/widget_types.go", "type WidgetSpec struct {\n", "type WidgetSpec struct {\n"+
		"\t// +kubebuilder:validation:Maximum=100\n\t// +optional\n\tReplicas int32 `json:\"replicas,omitempty\"`\n")
	p.run("go", "generate", "./...")
	p.run("go", "generate", "./...")
	require.FileExists(t, filepath.Join(p.dir, "apis/demo/v2/zz_generated.conversion_test.go"), "the versions differ: conversions and their test are generated")
	p.run("go", "build", "./...")
	out := p.run("go", "test", "-count=1", "./...")
	require.Contains(t, out, "ok  \texample.com/conv-demo/apis/demo/v2")
}

// project is a new operator project made with this checkout's opgen.
type project struct {
	t        *testing.T
	dir, bin string
}

// initProject builds opgen and runs opgen init in a new directory name,
// replacing the opgen module with this checkout.
func initProject(t *testing.T, name string) *project {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds and tests a new project (about a minute); run without -short")
	}
	_, file, _, _ := runtime.Caller(0)
	repo, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
	require.NoError(t, err)
	p := &project{t: t, bin: t.TempDir(), dir: filepath.Join(t.TempDir(), name)}
	require.NoError(t, os.Mkdir(p.dir, 0o755))
	build := exec.Command("go", "build", "-o", filepath.Join(p.bin, "opgen"), "./cmd/opgen")
	build.Dir = repo
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build opgen:\n%s", out)
	p.run("opgen", "init", "--module", "example.com/"+name, "--replace", repo)
	return p
}

// run runs a command in the project, with opgen the one built, and
// returns its output; it fails the test when the command fails.
func (p *project) run(name string, args ...string) string {
	p.t.Helper()
	if name == "opgen" {
		name = filepath.Join(p.bin, "opgen")
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), "PATH="+p.bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	require.NoError(p.t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	return string(out)
}

// edit replaces old with new in the project's file rel.
func (p *project) edit(rel, old, new string) {
	p.t.Helper()
	path := filepath.Join(p.dir, rel)
	src, err := os.ReadFile(path)
	require.NoError(p.t, err)
	edited := strings.Replace(string(src), old, new, 1)
	require.NotEqual(p.t, string(src), edited, "%q is not in %s", old, rel)
	require.NoError(p.t, os.WriteFile(path, []byte(edited), 0o644))
}
