package crd_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"
	ctcrd "sigs.k8s.io/controller-tools/pkg/crd"
	"sigs.k8s.io/controller-tools/pkg/genall"
	"sigs.k8s.io/controller-tools/pkg/loader"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/crd"
)

// TestCRDsAreControllerGens runs opgen's crd generator and controller-gen's
// (controller-tools' crd generator, as `controller-gen crd` runs it) on the
// fixture's API types, without a description cap and with the caps of
// crd:maxDescLen, and on types that embed core/v1's, and compares the
// manifests byte for byte. opgen's carry
// its header line and, for a kind with conversions, the conversion stanza
// (the API server's webhook), which controller-gen does not write; both are
// taken out before comparing.
func TestCRDsAreControllerGens(t *testing.T) {
	for _, tc := range []struct {
		fixture    string
		maxDescLen *int
	}{
		{"../internal/fixture", nil},
		{"../internal/fixture", ptr.To(0)},
		{"../internal/fixture", ptr.To(40)},
		{"../internal/fixture", ptr.To(120)},
		// Types that embed core/v1's pod template, whose markers are read
		// from the dependency's lean syntax.
		{"../conversion/testdata/shapes", nil},
	} {
		fixture, maxDescLen := tc.fixture, tc.maxDescLen
		name := filepath.Base(fixture) + ", no cap"
		if maxDescLen != nil {
			name = fmt.Sprintf("%s, maxDescLen=%d", filepath.Base(fixture), *maxDescLen)
		}
		t.Run(name, func(t *testing.T) {
			res, err := gen.Run(context.Background(), gen.Options{Root: fixture, DryRun: true, StampDir: "-", CRDMaxDescLen: maxDescLen},
				map[string]gen.Generator{"crd": crd.Generator{}})
			require.NoError(t, err)
			root, err := filepath.Abs(fixture)
			require.NoError(t, err)
			ours := map[string]string{}
			for path, data := range res.Output.Files() {
				rel, _ := filepath.Rel(filepath.Join(root, "config", "crd"), path)
				ours[rel] = withoutConversion(strings.TrimPrefix(string(data), "# "+gen.Header+"\n"))
			}
			theirs := controllerGen(t, filepath.Join(fixture, "apis", "..."), maxDescLen)
			require.NotEmpty(t, theirs)
			assert.Equal(t, theirs, ours)
			if maxDescLen != nil && *maxDescLen == 0 {
				for name, m := range ours {
					assert.NotContains(t, m, "description:", "%s: maxDescLen=0 drops every description", name)
				}
			}
		})
	}
}

// controllerGen runs controller-tools' crd generator on the packages of
// pattern, with maxDescLen, and returns its manifests by file name.
func controllerGen(t *testing.T, pattern string, maxDescLen *int) map[string]string {
	t.Helper()
	g := genall.Generator(ctcrd.Generator{MaxDescLen: maxDescLen, OmitToolVersion: ptr.To(true)})
	rt, err := genall.Generators{&g}.ForRoots(pattern)
	require.NoError(t, err)
	out := capture{}
	rt.OutputRules = genall.OutputRules{Default: out}
	require.False(t, rt.Run(), "controller-gen failed on %s", pattern)
	return out
}

// capture keeps controller-gen's files in memory.
type capture map[string]string

func (c capture) Open(_ *loader.Package, itemPath string) (io.WriteCloser, error) {
	return &file{name: itemPath, out: c}, nil
}

type file struct {
	bytes.Buffer
	name string
	out  capture
}

func (f *file) Close() error {
	f.out[f.name] = f.String()
	return nil
}

// withoutConversion takes the spec.conversion stanza opgen adds out of a
// manifest.
func withoutConversion(manifest string) string {
	lines := strings.SplitAfter(manifest, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		if lines[i] == "  conversion:\n" {
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "    ") {
				i++
			}
			continue
		}
		out = append(out, lines[i])
	}
	return strings.Join(out, "")
}
