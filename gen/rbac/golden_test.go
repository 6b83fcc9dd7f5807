package rbac_test

import (
	"testing"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/internal/gentest"
	"github.com/opgen-sdk/opgen/gen/rbac"
)

// TestGolden compares the generator's output on gen/testdata/golden with
// the files committed there; go test -update rewrites them.
func TestGolden(t *testing.T) {
	gentest.Golden(t, "../testdata/golden", func() map[string]gen.Generator {
		return map[string]gen.Generator{"rbac": rbac.Generator{}}
	})
}

// TestGoldenBuiltinOnly: handler types of built-in kinds, without API types
// (and so without a generated clientset).
func TestGoldenBuiltinOnly(t *testing.T) {
	gentest.Golden(t, "../testdata/builtin", func() map[string]gen.Generator {
		return map[string]gen.Generator{"rbac": rbac.Generator{}}
	})
}
