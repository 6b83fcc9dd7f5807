package gen_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/generators"
)

func TestNameOf(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]string{
		"example.com/hello-operator":               "hello-operator",
		"example.com/hello-operator/v2":            "hello-operator",
		"github.com/opgen-sdk/opgen/examples/todo": "todo",
		"example.com/My_Operator.io":               "my-operator-io",
		"v3":                                       "v3",
		"example.com/___":                          "operator",
	} {
		assert.Equal(t, want, gen.NameOf(path), path)
	}
}

// TestCopiedProjectGeneratesTheSameBytes copies a project into two
// directories with different names and generates in both: every file is
// byte-identical, because the names in it (roles, field manager,
// finalizers) come from go.mod's module path, not from the directory.
func TestCopiedProjectGeneratesTheSameBytes(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	var outputs []map[string]string
	for _, dir := range []string{"checkout", "copy-of-it"} {
		root := filepath.Join(tmp, dir)
		writeModule(t, root, "example.com/widget-operator")
		copyTree(t, "testdata/golden/apis/shop/v1", filepath.Join(root, "apis", "shop", "v1"))
		// The Order's watches marker names a mapping function of the
		// controller package; it imports nothing of the golden module.
		data, err := os.ReadFile("testdata/golden/internal/controller/maps.go")
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(root, "internal", "controller"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, "internal", "controller", "maps.go"), data, 0o644))
		res, err := gen.Run(context.Background(), gen.Options{Root: root, DryRun: true, StampDir: "-"}, generators.All())
		require.NoError(t, err)
		files := map[string]string{}
		for abs, data := range res.Output.Files() {
			rel, err := filepath.Rel(root, abs)
			require.NoError(t, err)
			files[filepath.ToSlash(rel)] = string(data)
		}
		outputs = append(outputs, files)
	}
	require.Contains(t, outputs[0], "config/rbac/role.yaml")
	assert.Contains(t, outputs[0]["config/rbac/role.yaml"], "name: widget-operator-manager")
	assert.Equal(t, outputs[0], outputs[1], "the directory's name leaked into generated output")
}

// writeModule writes a go.mod for module mod in root that resolves like
// this checkout: opgen replaced by it, the same requirements and sums.
func writeModule(t *testing.T, root, mod string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(root, 0o755))
	checkout, err := filepath.Abs("..")
	require.NoError(t, err)
	gomod, err := os.ReadFile(filepath.Join(checkout, "go.mod"))
	require.NoError(t, err)
	gomod = regexp.MustCompile(`(?m)^module .*$`).ReplaceAll(gomod, []byte("module "+mod))
	gomod = append(gomod, []byte("\nrequire github.com/opgen-sdk/opgen v0.0.0\n\nreplace github.com/opgen-sdk/opgen => "+checkout+"\n")...)
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), gomod, 0o644))
	sum, err := os.ReadFile(filepath.Join(checkout, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.sum"), sum, 0o644))
}

// copyTree copies the hand-written Go files of src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dst, 0o755))
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".go" || regexp.MustCompile(`^zz_generated`).MatchString(e.Name()) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644))
	}
}
