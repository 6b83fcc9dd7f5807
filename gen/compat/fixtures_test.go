package compat_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/compat"
	"github.com/opgen-sdk/opgen/gen/crd"
	"github.com/opgen-sdk/opgen/gen/internal/gentest"
)

// TestFixtures runs the gate on every project under testdata (its
// README.md says what it changes) and compares what the run reports with
// want.txt: the errors of a failed run, or "ok" and the warnings of a
// passing one. Each project's config/released holds the CRD of its
// before/ types, which -update writes with opgen release, as a user
// would.
func TestFixtures(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, dir := range dirs {
		if info, err := os.Stat(dir); err != nil || !info.IsDir() || strings.HasPrefix(filepath.Base(dir), "tmp-") {
			continue // the README, or a project of another test
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			if *gentest.Update {
				release(t, dir)
			}
			got := runGate(t, dir)
			want := filepath.Join(dir, "want.txt")
			if *gentest.Update {
				require.NoError(t, os.WriteFile(want, []byte(got), 0o644))
			}
			expected, err := os.ReadFile(want)
			require.NoError(t, err, "run go test ./gen/compat -update to write %s", want)
			assert.Equal(t, string(expected), got)
		})
	}
}

// release records the CRDs of dir/before in dir/config/released, where
// the fixture's policy file stays.
func release(t *testing.T, dir string) {
	t.Helper()
	released := filepath.Join(dir, "config", "released")
	policy, policyErr := os.ReadFile(filepath.Join(released, compat.PolicyFile))
	require.NoError(t, os.RemoveAll(released))
	if policyErr == nil {
		require.NoError(t, os.MkdirAll(released, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(released, compat.PolicyFile), policy, 0o644))
	}
	_, err := compat.Release(context.Background(), gen.Options{
		Root: filepath.Join(dir, "before"), Patterns: []string{"./apis/..."}, Name: "fixture",
		ReleasedDir: filepath.Join("..", "config", "released"), StampDir: "-",
	})
	require.NoError(t, err)
}

// runGate runs the CRD generator and the gate on the project in dir and
// returns what it reports, with paths relative to dir.
func runGate(t *testing.T, dir string) string {
	t.Helper()
	root, err := filepath.Abs(dir)
	require.NoError(t, err)
	gate := &compat.Generator{}
	res, err := gen.Run(context.Background(), gen.Options{
		Root: dir, Patterns: []string{"./apis/..."}, Name: "fixture", DryRun: true, StampDir: "-",
	}, map[string]gen.Generator{"crd": crd.Generator{}, "compat": gate})
	var runErr *gen.RunError
	if err != nil {
		require.ErrorAs(t, err, &runErr)
		return runErr.Relative(root).Error() + "\n"
	}
	var b strings.Builder
	b.WriteString("ok\n")
	if note := gate.Note("config/released"); note != "" {
		fmt.Fprintf(&b, "note: %s\n", note)
	}
	for _, w := range (&gen.RunError{Errors: res.Warnings}).Relative(root).Errors {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return b.String()
}
