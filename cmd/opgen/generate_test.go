package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// update rewrites the want.txt of the failure fixtures.
var update = flag.Bool("update", false, "rewrite testdata/errors/*/want.txt")

// runOpgen runs the opgen command line with args and returns its error
// text.
func runOpgen(t *testing.T, args ...string) error {
	t.Helper()
	cmd := newGenerateCommand()
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SilenceUsage = true
	cmd.SilenceErrors = true
	return cmd.ExecuteContext(context.Background())
}

// TestFailureFixtures runs opgen generate on each project under
// testdata/errors and compares the whole error report with want.txt in
// it. A failed run must write nothing.
func TestFailureFixtures(t *testing.T) {
	dirs, err := filepath.Glob("testdata/errors/*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			before := listFiles(t, dir)
			err := runOpgen(t, "-C", dir, "--force", "./...")
			require.Error(t, err, "the fixture must fail")
			got := err.Error() + "\n"
			want := filepath.Join(dir, "want.txt")
			if *update {
				require.NoError(t, os.WriteFile(want, []byte(got), 0o644))
			}
			expected, err := os.ReadFile(want)
			require.NoError(t, err, "run go test ./cmd/opgen -update to write %s", want)
			assert.Equal(t, string(expected), got)
			assert.Equal(t, before, listFiles(t, dir), "a failed run must write nothing")
		})
	}
}

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, "want.txt") {
			out = append(out, p)
		}
		return err
	})
	require.NoError(t, err)
	return out
}
