package main

import (
	"context"
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
