// Package gentest runs generators on golden projects for the generators'
// tests: the generated files committed in a project under testdata are the
// golden files, and -update rewrites them.
package gentest

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/opgen-sdk/opgen/gen/model"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-tools/pkg/markers"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/generators"
)

// Update rewrites golden files instead of comparing with them.
var Update = flag.Bool("update", false, "rewrite the golden files under testdata")

// Run runs generators on the project in dir without writing, and returns
// every file the run would write (scaffolds included), by path relative to
// dir.
func Run(t testing.TB, dir string, generators map[string]gen.Generator) map[string][]byte {
	t.Helper()
	res, err := gen.Run(context.Background(), gen.Options{Root: dir, DryRun: true, StampDir: "-", Name: "golden"}, generators)
	require.NoError(t, err)
	root, err := filepath.Abs(dir)
	require.NoError(t, err)
	out := map[string][]byte{}
	for abs, data := range res.Output.Files() {
		out[rel(t, root, abs)] = data
	}
	for abs, data := range res.Output.Scaffolds() {
		out[rel(t, root, abs)] = data
	}
	return out
}

// Golden runs newGenerators' generators on the project in dir and compares
// every file they produce with the file committed there; with -update it
// writes them instead. It runs them a second time, with new generators, to
// check that the output is byte-identical.
func Golden(t *testing.T, dir string, newGenerators func() map[string]gen.Generator) {
	t.Helper()
	files := Run(t, dir, newGenerators())
	require.NotEmpty(t, files, "the generators produced nothing for %s", dir)
	Compare(t, dir, files)
	again := Run(t, dir, newGenerators())
	assert.Equal(t, files, again, "a second run must produce byte-identical output")
}

// Compare compares files, by path relative to dir, with the files in dir;
// with -update it writes them first.
func Compare(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	if *Update {
		for path, data := range files {
			p := filepath.Join(dir, path)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, data, 0o644))
		}
	}
	for _, path := range sortedKeys(files) {
		want, err := os.ReadFile(filepath.Join(dir, path))
		if !assert.NoError(t, err, "golden file missing: run go test ./gen/... -update and review the diff") {
			continue
		}
		assert.Equal(t, string(want), string(files[path]), "%s differs from the golden file: if the change is intended, run go test ./gen/... -update and review the diff", path)
	}
}

func rel(t testing.TB, root, path string) string {
	t.Helper()
	r, err := filepath.Rel(root, path)
	require.NoError(t, err)
	return filepath.ToSlash(r)
}

func sortedKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Model returns the project and the API model of the project in dir.
func Model(t testing.TB, dir string) (*gen.Project, *model.API) {
	t.Helper()
	probe := &probe{}
	Run(t, dir, map[string]gen.Generator{"probe": probe})
	return probe.project, probe.api
}

type probe struct {
	project *gen.Project
	api     *model.API
}

func (*probe) RegisterMarkers(*markers.Registry) error { return nil }

func (p *probe) Generate(ctx *gen.Context) error {
	p.project, p.api = ctx.Project, ctx.API
	return nil
}

// All returns every generator, as opgen generate runs them: the one list
// of package generators.
func All() map[string]gen.Generator { return generators.All() }
