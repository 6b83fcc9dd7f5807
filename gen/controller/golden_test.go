package controller_test

import (
	"testing"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/controller"
	"github.com/opgen-sdk/opgen/internal/gentest"
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
