package controller_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/controller"
	"github.com/opgen-sdk/opgen/gen/internal/gentest"
)

// TestGolden compares the generator's output on gen/testdata/golden with
// the files committed there; go test -update rewrites them.
func TestGolden(t *testing.T) {
	gentest.Golden(t, "../testdata/golden", func() map[string]gen.Generator {
		return map[string]gen.Generator{"controller": controller.Generator{}}
	})
}

// TestGoldenWithoutKinds: a controller package without kinds still gets a
// Setup, so that a project fresh from opgen init compiles.
func TestGoldenWithoutKinds(t *testing.T) {
	gentest.Golden(t, "../testdata/nokinds", func() map[string]gen.Generator {
		return map[string]gen.Generator{"controller": controller.Generator{}}
	})
}

// TestGoldenBuiltinOnly: handler types of built-in kinds, without API types
// (and so without a generated clientset).
func TestGoldenBuiltinOnly(t *testing.T) {
	gentest.Golden(t, "../testdata/builtin", func() map[string]gen.Generator {
		return map[string]gen.Generator{"controller": controller.Generator{}}
	})
}

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

// TestGoldenControllerPerVersion: a kind with controllers in v1 and v2
// (+opgen:controller:dispatch) gets one registration per version, the
// newer one named after its version, both with the same dispatch rule.
// The project compiles and its test runs the glue against a real API
// server.
func TestGoldenControllerPerVersion(t *testing.T) {
	gentest.Golden(t, "../internal/versions", func() map[string]gen.Generator {
		return map[string]gen.Generator{"controller": controller.Generator{}}
	})
}

// TestGoldenWebhooks: a kind with a controller and both admission
// webhooks, built by its New<Kind>Webhook, and a kind with a defaulting
// webhook only, whose glue declares its Kind function itself.
func TestGoldenWebhooks(t *testing.T) {
	gentest.Golden(t, "../testdata/webhooks", func() map[string]gen.Generator {
		return map[string]gen.Generator{"controller": controller.Generator{}}
	})
}
