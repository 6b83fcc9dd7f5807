package testkit_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/opgen-sdk/opgen/"

// listed is what go list says of one package.
type listed struct {
	ImportPath string
	Imports    []string
}

// list runs go list -json over patterns, from the module's root.
func list(t *testing.T, patterns ...string) []listed {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Imports"}, patterns...)...)
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

// TestInternalIsAGroundFloor: internal/ imports nothing of pkg/, but for
// the test harnesses under internal/testkit; and no package of pkg/ links
// a test harness.
func TestInternalIsAGroundFloor(t *testing.T) {
	t.Parallel()
	for _, p := range list(t, "./internal/...") {
		if strings.HasPrefix(p.ImportPath, module+"internal/testkit") {
			continue
		}
		for _, imp := range p.Imports {
			require.False(t, strings.HasPrefix(imp, module+"pkg/"),
				"%s imports %s: internal/ is the ground floor; move what both need into internal/, or the harness under internal/testkit", p.ImportPath, imp)
		}
	}
	for _, p := range list(t, "./pkg/...") {
		for _, imp := range p.Imports {
			require.False(t, strings.HasPrefix(imp, module+"internal/testkit"),
				"%s imports the test harness %s outside its tests", p.ImportPath, imp)
		}
	}
}
