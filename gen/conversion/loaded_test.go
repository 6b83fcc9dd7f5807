package conversion

import (
	"context"
	"go/format"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-tools/pkg/markers"

	"github.com/opgen-sdk/opgen/gen"
)

// TestRunsLoadGivesConversionGensOutput runs conversion-gen twice on API
// types with a field of every shape (testdata/shapes: memory-equal and
// differing structs, pointers, slices and maps of them, apimachinery's
// Time, Duration, Quantity, IntOrString and LabelSelector, core/v1 types,
// a RawExtension, an enum, a type opted out, a field dropped, a field
// type that changes, fields only one version has, a hand-written
// conversion and a copy-only one): once on the universe built from the
// run's load, once on gengo's own load of the packages, as conversion-gen
// loads them. The two must be byte-identical, and the first must be the
// one the generator uses.
func TestRunsLoadGivesConversionGensOutput(t *testing.T) {
	c := &compare{t: t}
	_, err := gen.Run(context.Background(), gen.Options{Root: "testdata/shapes", DryRun: true, StampDir: "-"}, map[string]gen.Generator{"compare": c})
	require.NoError(t, err)
	require.True(t, c.compared)
}

// compare prepares a conversion Generator and runs both ways.
type compare struct {
	t        *testing.T
	g        Generator
	compared bool
}

func (*compare) RegisterMarkers(*markers.Registry) error { return nil }

func (c *compare) Prepare(ctx *gen.Context) error { return c.g.Prepare(ctx) }

func (c *compare) Generate(ctx *gen.Context) error {
	t := c.t
	require.NotEmpty(t, c.g.spokes)
	require.NotNil(t, c.g.prepared, "the universe from the run's load is used: %s", c.g.fallback)
	fromLoad, err := runPrepared(c.g.spokes, ctx.Project.ConversionExtraPeerDirs, c.g.prepared)
	require.NoError(t, err)
	fromGengo, err := runLoaded(ctx.Project.Root, c.g.spokes, c.g.peers, ctx.Project.ConversionExtraPeerDirs, c.g.drops)
	require.NoError(t, err)
	require.NotEmpty(t, fromGengo)
	for path, want := range fromGengo {
		// gengo's import lines come in map order: compare gofmt'd.
		want, err := format.Source(want)
		require.NoError(t, err)
		got, err := format.Source(fromLoad[path])
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "%s", path)
	}
	assert.Len(t, fromLoad, len(fromGengo))
	c.compared = true
	return nil
}

// TestGroupsRunApart: two groups whose spokes each declare the
// conversion of a type they share (as Cluster API's addons and bootstrap
// groups both convert their Condition to meta/v1's) are converted in
// separate conversion-gen runs, as projects run it per group: in one run,
// conversion-gen stops with "duplicate static conversion defined".
func TestGroupsRunApart(t *testing.T) {
	res, err := gen.Run(context.Background(), gen.Options{Root: "testdata/twogroups", DryRun: true, StampDir: "-", StrictConversion: true}, map[string]gen.Generator{"conversion": &Generator{}})
	require.NoError(t, err)
	var files []string
	for path, data := range res.Output.Files() {
		if filepath.Base(path) == FileName && strings.Contains(string(data), "Convert_v1beta1_Note_To_v1_Note(&in.Note, &out.Note, s)") {
			files = append(files, path)
		}
	}
	assert.Len(t, files, 2, "each group's spoke calls its own conversion of the shared type")
}
