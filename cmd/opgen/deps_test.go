package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// forbiddenDeps are the import path prefixes the generator and the CLI
// must not link: the operator runtime and what it brings (metrics,
// tracing). The table of built-in kinds they need is package internal/builtinkinds.
var forbiddenDeps = []string{
	"github.com/opgen-sdk/opgen/pkg/runtime",
	"github.com/opgen-sdk/opgen/pkg/plug",
	"github.com/opgen-sdk/opgen/pkg/telemetry",
	"github.com/prometheus/",
	"go.opentelemetry.io/",
}

// TestCLILinksNoRuntime: the opgen binary, and so the gen packages it
// uses, link none of forbiddenDeps, as controller-gen links no
// controller-runtime.
func TestCLILinksNoRuntime(t *testing.T) {
	t.Parallel()
	require.Empty(t, linked(t, "github.com/opgen-sdk/opgen/cmd/opgen", forbiddenDeps), "cmd/opgen or gen links runtime packages; find the importer with go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/opgen")
}

// TestOptestLinksNoGenerator: the test kit users link into their operator
// tests, pkg/optest, links no part of the generator (gen/, controller-tools,
// gengo, x/tools): what it shares with opgen generate (the manifest, the
// samples) lives in leaf packages under pkg/.
func TestOptestLinksNoGenerator(t *testing.T) {
	t.Parallel()
	generator := []string{"github.com/opgen-sdk/opgen/gen", "sigs.k8s.io/controller-tools/", "k8s.io/gengo/", "golang.org/x/tools/"}
	require.Empty(t, linked(t, "github.com/opgen-sdk/opgen/pkg/optest", generator), "pkg/optest links the generator; find the importer with go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./pkg/optest")
}

// linked returns the packages pkg links whose paths have one of prefixes.
func linked(t *testing.T, pkg string, prefixes []string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
	require.NoError(t, err, "go list -deps: %s", out)
	var found []string
	for p := range strings.Lines(string(out)) {
		p = strings.TrimSpace(p)
		for _, prefix := range prefixes {
			if strings.HasPrefix(p, prefix) {
				found = append(found, p)
			}
		}
	}
	return found
}

// TestOperatorLinksNoControllerRuntime: an operator built on opgen alone,
// hello-operator, links no controller-runtime. The bridge that runs opgen
// controllers in a controller-runtime manager (pkg/runtime/ctrlbridge) is
// a package only adopters import.
func TestOperatorLinksNoControllerRuntime(t *testing.T) {
	t.Parallel()
	for _, pkg := range []string{"github.com/opgen-sdk/opgen/examples/hello-operator", "github.com/opgen-sdk/opgen/pkg/runtime"} {
		require.Empty(t, linked(t, pkg, []string{"sigs.k8s.io/controller-runtime"}), "%s links controller-runtime; find the importer with go list -deps -f '{{.ImportPath}}: {{.Imports}}' %s", pkg, pkg)
	}
}
