package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/generators"
)

// TestAllowDangerousTypes checks that the option the float error names
// exists and works: the float-field failure fixture generates with it,
// the float becoming a number in the CRD.
func TestAllowDangerousTypes(t *testing.T) {
	root, err := filepath.Abs("testdata/errors/float-field")
	require.NoError(t, err)
	res, err := gen.Run(context.Background(), gen.Options{Root: root, DryRun: true, AllowDangerousTypes: true, StampDir: "-"}, generators.All())
	require.NoError(t, err)
	crd := res.Output.Files()[filepath.Join(root, "config/crd/test.example.com_widgets.yaml")]
	require.NotNil(t, crd, "no CRD in %v", keys(res.Output.Files()))
	assert.Contains(t, string(crd), "ratio:\n                description: Ratio is a fraction.\n                type: number")
}

func keys(m map[string][]byte) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return strings.Join(out, " ")
}

// TestCRDMaxDescLen runs the command line with --crd-max-desc-len end to
// end: every description of the written CRD is at most that long, or that
// long and "..." where no sentence ended in time, and 0 drops them, as
// controller-gen's crd:maxDescLen; without the flag they are whole.
func TestCRDMaxDescLen(t *testing.T) {
	t.Parallel()
	descriptions := func(flags ...string) []string {
		work := copyFixture(t, "testdata/errors/float-field")
		args := append([]string{"-C", work, "--force", "--allow-dangerous-types"}, flags...)
		require.NoError(t, runOpgen(t, append(args, "./...")...))
		crd, err := os.ReadFile(filepath.Join(work, "config/crd/test.example.com_widgets.yaml"))
		require.NoError(t, err)
		var out []string
		for _, line := range strings.Split(string(crd), "\n") {
			if d, ok := strings.CutPrefix(strings.TrimSpace(line), "description: "); ok {
				out = append(out, d)
			}
		}
		return out
	}
	whole := descriptions()
	require.Contains(t, whole, "Ratio is a fraction.")
	longest := 0
	for _, d := range whole {
		longest = max(longest, len(d))
	}
	require.Greater(t, longest, 12, "the fixture needs a description longer than the cap")
	for _, d := range descriptions("--crd-max-desc-len", "12") {
		assert.LessOrEqual(t, len(strings.TrimSuffix(d, "...")), 12, "%q is over the cap", d)
	}
	assert.Empty(t, descriptions("--crd-max-desc-len=0"), "0 drops every description")
}
