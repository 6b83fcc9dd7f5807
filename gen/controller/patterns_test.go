package controller_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/controller"
)

// TestGlueKeepsHandlersWithNarrowPatterns: opgen generate ./apis/... still
// reads the controller package, whose glue it writes, so the handlers of
// built-in kinds declared there stay registered.
func TestGlueKeepsHandlersWithNarrowPatterns(t *testing.T) {
	root, err := filepath.Abs("../testdata/golden")
	require.NoError(t, err)
	res, err := gen.Run(context.Background(), gen.Options{Root: root, Patterns: []string{"./apis/..."}, DryRun: true, StampDir: "-", Name: "golden"},
		map[string]gen.Generator{"controller": controller.Generator{}})
	require.NoError(t, err)
	glue := res.Output.Files()[filepath.Join(root, "internal/controller", controller.FileName)]
	assert.Contains(t, string(glue), "SetupPodPrinter(op, &PodPrinter{})")
}
