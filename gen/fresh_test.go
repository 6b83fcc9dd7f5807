package gen_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/internal/gentest"
)

// TestFixtureIsFresh regenerates the fixture project in memory, twice,
// and compares with what is committed: the output is deterministic and the
// committed code is what go generate writes.
func TestFixtureIsFresh(t *testing.T) {
	opts := gen.Options{Root: "internal/fixture", Name: "fixture-operator", DryRun: true, StampDir: "-"}
	first, err := gen.Run(context.Background(), opts, gentest.All())
	require.NoError(t, err)
	second, err := gen.Run(context.Background(), opts, gentest.All())
	require.NoError(t, err)
	files := first.Output.Files()
	assert.Equal(t, files, second.Output.Files(), "two runs must produce byte-identical output")
	assert.Greater(t, len(files), 50)
	for path, data := range files {
		onDisk, err := os.ReadFile(path)
		if assert.NoError(t, err) {
			assert.Equal(t, string(onDisk), string(data), "%s is stale: run go generate ./gen/internal/fixture", path)
		}
	}
	assert.Empty(t, first.Output.Scaffolds(), "the fixture's stubs exist and are never rewritten")
}

// ExampleRun generates the golden project's code in memory and lists the
// manifests it would write.
func ExampleRun() {
	res, err := gen.Run(context.Background(), gen.Options{
		Root:     "testdata/golden",
		DryRun:   true, // stage only; without it Run writes the files
		StampDir: "-",
	}, gentest.All())
	if err != nil {
		fmt.Println(err)
		return
	}
	root, _ := filepath.Abs("testdata/golden")
	var manifests []string
	for path := range res.Output.Files() {
		if rel, _ := filepath.Rel(root, path); filepath.Ext(rel) == ".yaml" {
			manifests = append(manifests, filepath.ToSlash(rel))
		}
	}
	sort.Strings(manifests)
	for _, m := range manifests {
		fmt.Println(m)
	}
	// Output:
	// config/crd/legacy.example.com_things.yaml
	// config/crd/shop.example.com_indexes.yaml
	// config/crd/shop.example.com_orders.yaml
	// config/rbac/leader_election_role.yaml
	// config/rbac/role.yaml
}
