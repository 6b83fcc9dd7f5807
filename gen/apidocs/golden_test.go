package apidocs_test

import (
	"testing"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/apidocs"
	"github.com/opgen-sdk/opgen/gen/internal/gentest"
)

// TestGolden compares the generator's output on gen/testdata/golden with
// the files committed there; go test -update rewrites them.
func TestGolden(t *testing.T) {
	gentest.Golden(t, "../testdata/golden", func() map[string]gen.Generator {
		return map[string]gen.Generator{"apidocs": apidocs.Generator{}}
	})
}
