package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// forbiddenDeps are the import path prefixes the generator and the CLI
// must not link: the operator runtime and what it brings (metrics,
// tracing). The table of built-in kinds they need is package internal/kinds.
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
	out, err := exec.Command("go", "list", "-deps", "github.com/opgen-sdk/opgen/cmd/opgen").CombinedOutput()
	require.NoError(t, err, "go list -deps: %s", out)
	var bad []string
	for pkg := range strings.Lines(string(out)) {
		pkg = strings.TrimSpace(pkg)
		for _, prefix := range forbiddenDeps {
			if strings.HasPrefix(pkg, prefix) {
				bad = append(bad, pkg)
			}
		}
	}
	require.Empty(t, bad, "cmd/opgen or gen links runtime packages; find the importer with go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/opgen")
}

// TestOptestLinksNoGenerator: the test kit users link into their operator
// tests, pkg/optest, links no part of the generator (gen/, controller-tools,
// gengo, x/tools): what it shares with opgen generate (the manifest, the
// samples) lives in leaf packages under pkg/.
func TestOptestLinksNoGenerator(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "github.com/opgen-sdk/opgen/pkg/optest").CombinedOutput()
	require.NoError(t, err, "go list -deps: %s", out)
	var bad []string
	for pkg := range strings.Lines(string(out)) {
		pkg = strings.TrimSpace(pkg)
		for _, prefix := range []string{"github.com/opgen-sdk/opgen/gen", "sigs.k8s.io/controller-tools/", "k8s.io/gengo/", "golang.org/x/tools/"} {
			if strings.HasPrefix(pkg, prefix) {
				bad = append(bad, pkg)
			}
		}
	}
	require.Empty(t, bad, "pkg/optest links the generator; find the importer with go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./pkg/optest")
}
