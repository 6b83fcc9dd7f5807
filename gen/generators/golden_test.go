package generators_test

import (
	"path/filepath"
	"testing"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/generators"
	"github.com/opgen-sdk/opgen/gen/internal/gentest"
)

// TestGolden runs each generator alone on the golden projects it is tested
// on and compares its output with the files committed there; go test
// -update rewrites them.
func TestGolden(t *testing.T) {
	const golden = "../testdata/golden"
	for _, tc := range []struct{ generator, project, what string }{
		{"accessors", golden, ""},
		{"apidocs", golden, ""},
		{"client", golden, ""},
		{"controller", golden, ""},
		{"crd", golden, ""},
		{"deepcopy", golden, ""},
		{"rbac", golden, ""},
		{"register", golden, ""},
		{"controller", "../testdata/nokinds", "a controller package without kinds still gets a Setup, so that a project fresh from opgen init compiles"},
		{"controller", "../testdata/builtin", "handler types of built-in kinds, without API types (and so without a generated clientset)"},
		{"rbac", "../testdata/builtin", "the rules of the handlers of built-in kinds alone"},
		{"controller", "../internal/versions", "a kind with controllers in v1 and v2 (+opgen:controller:dispatch) gets one registration per version, the newer one named after its version, both with the same dispatch rule; the project compiles and its test runs the glue against a real API server"},
		{"controller", "../testdata/webhooks", "a kind with a controller and both admission webhooks, built by its New<Kind>Webhook, and a kind with a defaulting webhook only, whose glue declares its Kind function itself"},
		{"webhooks", "../testdata/webhooks", "the configurations of a validating and a mutating webhook of a namespaced Widget and a mutating webhook of a cluster-scoped Gadget, which no namespace selector narrows"},
	} {
		t.Run(tc.generator+" on "+filepath.Base(tc.project), func(t *testing.T) {
			if tc.what != "" {
				t.Log(tc.what)
			}
			gentest.Golden(t, tc.project, func() map[string]gen.Generator {
				return map[string]gen.Generator{tc.generator: generators.All()[tc.generator]}
			})
		})
	}
}
