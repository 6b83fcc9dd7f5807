package scaffold_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/internal/gentest"
	"github.com/opgen-sdk/opgen/gen/scaffold"
)

func newProject(t *testing.T) *gen.Project {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/hello\n\ngo 1.26\n"), 0o644))
	p, err := gen.NewProject(gen.Options{Root: root})
	require.NoError(t, err)
	return p
}

func rel(t *testing.T, p *gen.Project, files []string) []string {
	t.Helper()
	var out []string
	for _, f := range files {
		r, err := filepath.Rel(p.Root, f)
		require.NoError(t, err)
		out = append(out, filepath.ToSlash(r))
	}
	return out
}

func TestCreateAPIScaffoldsTypesAndStub(t *testing.T) {
	p := newProject(t)
	created, err := scaffold.CreateAPI(p, scaffold.APIOptions{Group: "hello.example.com", Version: "v1", Kind: "Greeting"})
	require.NoError(t, err)
	assert.Equal(t, []string{"apis/hello/v1/doc.go", "apis/hello/v1/greeting_types.go", "internal/controller/greeting.go",
		"internal/controller/greeting_test.go", "internal/controller/main_test.go"}, rel(t, p, created.Files), "in the same order every time")

	types, err := os.ReadFile(filepath.Join(p.Root, "apis/hello/v1/greeting_types.go"))
	require.NoError(t, err)
	assert.Contains(t, string(types), "// +opgen:controller\ntype Greeting struct")
	assert.Contains(t, string(types), "apis.Status `json:\",inline\"`")
	doc, err := os.ReadFile(filepath.Join(p.Root, "apis/hello/v1/doc.go"))
	require.NoError(t, err)
	assert.Contains(t, string(doc), "// +groupName=hello.example.com\npackage v1")
	stub, err := os.ReadFile(filepath.Join(p.Root, "internal/controller/greeting.go"))
	require.NoError(t, err)
	assert.Contains(t, string(stub), "type GreetingController struct{}")
	assert.Contains(t, string(stub), ") Reconcile(ctx context.Context")
	for _, m := range []string{") Add(", ") Modify(", ") Delete("} {
		assert.NotContains(t, string(stub), m, "a stub has only the methods asked for: Delete alone turns on a finalizer")
	}
	assert.Contains(t, created.Notes[len(created.Notes)-1], "registers the new controller")
	kindTest, err := os.ReadFile(filepath.Join(p.Root, "internal/controller/greeting_test.go"))
	require.NoError(t, err)
	assert.Contains(t, string(kindTest), ".HelloV1().Greetings(kit.Namespace(t))")
	mainTest, err := os.ReadFile(filepath.Join(p.Root, "internal/controller/main_test.go"))
	require.NoError(t, err)
	assert.Contains(t, string(mainTest), `ConfigDir: "../../config",`)
	assert.Contains(t, string(mainTest), "func TestMain(m *testing.M) { kit.Main(m) }")

	_, err = scaffold.CreateAPI(p, scaffold.APIOptions{Group: "hello.example.com", Version: "v1", Kind: "Greeting"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "never overwrites")
}

func TestCreateAPIWithDelete(t *testing.T) {
	p := newProject(t)
	_, err := scaffold.CreateAPI(p, scaffold.APIOptions{Group: "hello.example.com", Version: "v1", Kind: "Greeting", WithDelete: true})
	require.NoError(t, err)
	stub, err := os.ReadFile(filepath.Join(p.Root, "internal/controller/greeting.go"))
	require.NoError(t, err)
	assert.Contains(t, string(stub), ") Reconcile(ctx context.Context")
	assert.Contains(t, string(stub), ") Delete(ctx context.Context")
	assert.NotContains(t, string(stub), ") Add(")
}

func TestCreateAPINewVersionKeepsTheController(t *testing.T) {
	p := newProject(t)
	_, err := scaffold.CreateAPI(p, scaffold.APIOptions{Group: "hello.example.com", Version: "v1", Kind: "Greeting"})
	require.NoError(t, err)
	created, err := scaffold.CreateAPI(p, scaffold.APIOptions{Group: "hello.example.com", Version: "v2", Kind: "Greeting"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"apis/hello/v2/doc.go", "apis/hello/v2/greeting_types.go"}, rel(t, p, created.Files))
	types, err := os.ReadFile(filepath.Join(p.Root, "apis/hello/v2/greeting_types.go"))
	require.NoError(t, err)
	assert.NotContains(t, string(types), "+opgen:controller")
	assert.Contains(t, created.Notes[0], "Greeting exists in v1")
	assert.Contains(t, created.Notes[1], "+kubebuilder:storageversion")
	last := created.Notes[len(created.Notes)-1]
	assert.Contains(t, last, "run `go generate ./...`")
	assert.NotContains(t, last, "controller", "types alone: there is no new controller to register")
}

func TestCreateAPIRejectsBadNames(t *testing.T) {
	p := newProject(t)
	cases := []struct {
		opts scaffold.APIOptions
		want string
	}{
		{scaffold.APIOptions{Group: "hello", Version: "v1", Kind: "Greeting"}, "--group \"hello\": give the full, lower-case API group"},
		{scaffold.APIOptions{Group: "hello.example.com", Version: "1", Kind: "Greeting"}, "--version \"1\": give a Kubernetes API version"},
		{scaffold.APIOptions{Group: "hello.example.com", Version: "v1", Kind: "greeting"}, "--kind \"greeting\": give a capitalized Go identifier"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			_, err := scaffold.CreateAPI(p, tc.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestCreatedAPIGenerates runs every generator on a scaffolded project
// inside this module, so the scaffold is known to be valid input.
func TestCreatedAPIGenerates(t *testing.T) {
	root, err := os.MkdirTemp(".", "created-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	p, err := gen.NewProject(gen.Options{Root: root})
	require.NoError(t, err)
	_, err = scaffold.CreateAPI(p, scaffold.APIOptions{Group: "hello.example.com", Version: "v1", Kind: "Greeting", ClusterScoped: true})
	require.NoError(t, err)
	files := gentest.Run(t, root, gentest.All())
	assert.Contains(t, files, "config/crd/hello.example.com_greetings.yaml")
	assert.Contains(t, files, "internal/controller/zz_generated.controllers.go")
	assert.Contains(t, files, "pkg/generated/clientset/versioned/clientset.go")
}

// TestCreateAPINewVersionWithController: --controller on a new version
// of a kind with a controller writes the version's own stub and the
// dispatch marker on both versions, and the project generates the glue of
// two controllers.
func TestCreateAPINewVersionWithController(t *testing.T) {
	root, err := os.MkdirTemp(".", "created-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	p, err := gen.NewProject(gen.Options{Root: root})
	require.NoError(t, err)
	_, err = scaffold.CreateAPI(p, scaffold.APIOptions{Group: "hello.example.com", Version: "v1", Kind: "Greeting"})
	require.NoError(t, err)
	created, err := scaffold.CreateAPI(p, scaffold.APIOptions{Group: "hello.example.com", Version: "v2", Kind: "Greeting", Controller: true})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"apis/hello/v2/doc.go", "apis/hello/v2/greeting_types.go", "internal/controller/greeting_v2.go"}, rel(t, p, created.Files))
	read := func(path string) string {
		data, err := os.ReadFile(filepath.Join(root, path))
		require.NoError(t, err)
		return string(data)
	}
	assert.Contains(t, read("apis/hello/v1/greeting_types.go"), "// +opgen:controller\n// +opgen:controller:dispatch=written\ntype Greeting struct")
	assert.Contains(t, read("apis/hello/v2/greeting_types.go"), "// +opgen:controller\n// +opgen:controller:dispatch=written\ntype Greeting struct")
	assert.Contains(t, read("internal/controller/greeting_v2.go"), "type GreetingV2Controller struct{}")
	assert.Contains(t, strings.Join(created.Notes, "\n"), "added +opgen:controller:dispatch=written to apis/hello/v1/greeting_types.go")

	v1 := filepath.Join(root, "apis/hello/v1/greeting_types.go")
	require.NoError(t, os.WriteFile(v1, []byte(strings.Replace(read("apis/hello/v1/greeting_types.go"), "// +opgen:controller\n", "// +kubebuilder:storageversion\n// +opgen:controller\n", 1)), 0o644))
	files := gentest.Run(t, root, gentest.All())
	glue := string(files["internal/controller/zz_generated.controllers.go"])
	assert.Contains(t, glue, "setupGreeting(op, cs, NewGreetingController(op))")
	assert.Contains(t, glue, "setupGreetingV2(op, cs, NewGreetingV2Controller(op))")
	assert.Contains(t, glue, `Dispatch: &runtime.VersionDispatch{Versions: []string{"v1", "v2"}, Written: true, Default: "v1"}`)

	// A third version shares the rule the others carry.
	created, err = scaffold.CreateAPI(p, scaffold.APIOptions{Group: "hello.example.com", Version: "v3", Kind: "Greeting", Controller: true})
	require.NoError(t, err)
	assert.Contains(t, read("apis/hello/v3/greeting_types.go"), "// +opgen:controller:dispatch=written\ntype Greeting struct")
	assert.NotContains(t, strings.Join(created.Notes, "\n"), "added +opgen:controller:dispatch")

	// An older version's controller would rename the existing ones.
	_, err = scaffold.CreateAPI(p, scaffold.APIOptions{Group: "hello.example.com", Version: "v1beta1", Kind: "Greeting", Controller: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "would rename the existing one")
}
