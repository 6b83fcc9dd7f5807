package testkit_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/opgen-sdk/opgen/"

// listed is what go list says of one package.
type listed struct {
	ImportPath                         string
	Imports, TestImports, XTestImports []string
}

// list runs go list -json over patterns, from the module's root.
func list(t *testing.T, patterns ...string) []listed {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Imports,TestImports,XTestImports"}, patterns...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	require.NoError(t, err, "go list %s", strings.Join(patterns, " "))
	var pkgs []listed
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var p listed
		require.NoError(t, dec.Decode(&p))
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestLayers: internal/ is the ground floor, and imports nothing of pkg/
// or test/, in its tests neither; and the test-only tree test/ is linked
// by tests only: no package of pkg/, gen/, cmd/ or internal/ imports it
// outside its tests.
func TestLayers(t *testing.T) {
	t.Parallel()
	for _, p := range list(t, "./internal/...") {
		for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			require.False(t, strings.HasPrefix(imp, module+"pkg/") || strings.HasPrefix(imp, module+"test/"),
				"%s imports %s: internal/ is the ground floor; move what both need into internal/, or what uses pkg/ under test/", p.ImportPath, imp)
		}
	}
	for _, p := range list(t, "./pkg/...", "./gen/...", "./cmd/...", "./internal/...") {
		for _, imp := range p.Imports {
			require.False(t, strings.HasPrefix(imp, module+"test/"),
				"%s imports the test-only %s outside its tests", p.ImportPath, imp)
		}
	}
}
