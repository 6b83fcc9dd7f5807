package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
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
// testdata/errors, in a copy, and compares the whole error report with
// want.txt in it. A failed run must write nothing, unless its only errors
// are functions the user must write: it then writes its output with stubs,
// and the copy must build. A fixture's flags file, when there is one,
// holds extra flags for the run, on one line.
func TestFailureFixtures(t *testing.T) {
	dirs, err := filepath.Glob("testdata/errors/*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			work := copyFixture(t, dir)
			before := listFiles(t, work)
			args := []string{"-C", work, "--force"}
			if flags, err := os.ReadFile(filepath.Join(dir, "flags")); err == nil {
				args = append(args, strings.Fields(string(flags))...)
			}
			err := runOpgen(t, append(args, "./...")...)
			require.Error(t, err, "the fixture must fail")
			// The copy's import path stands in messages: name the fixture.
			got := strings.ReplaceAll(err.Error()+"\n", filepath.Base(work), filepath.Base(dir))
			want := filepath.Join(dir, "want.txt")
			if *update {
				require.NoError(t, os.WriteFile(want, []byte(got), 0o644))
			}
			expected, err := os.ReadFile(want)
			require.NoError(t, err, "run go test ./cmd/opgen -update to write %s", want)
			assert.Equal(t, string(expected), got)
			if strings.Contains(got, "the generated files are written") {
				goBuild(t, work)
				return
			}
			assert.Equal(t, before, listFiles(t, work), "a failed run must write nothing")
		})
	}
}

// copyFixture copies the fixture dir into a new directory beside it, in
// the module (the go command skips testdata), removed after the test. The
// fixture's imports of its own packages are rewritten to the copy's.
func copyFixture(t *testing.T, dir string) string {
	t.Helper()
	work, err := os.MkdirTemp(filepath.Dir(dir), ".run-"+filepath.Base(dir)+"-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(work) })
	require.NoError(t, os.CopyFS(work, os.DirFS(dir)))
	from, to := "/errors/"+filepath.Base(dir)+"/", "/errors/"+filepath.Base(work)+"/"
	err = filepath.WalkDir(work, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(p, []byte(strings.ReplaceAll(string(data), from, to)), 0o644)
	})
	require.NoError(t, err)
	return work
}

// goBuild builds and vets the packages of dir: every file opgen writes
// compiles, stubs included.
func goBuild(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s in the fixture after the run: %s", strings.Join(args, " "), out)
	}
}

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, "want.txt") && filepath.Base(p) != "flags" {
			p, _ = filepath.Rel(dir, p)
			out = append(out, p)
		}
		return err
	})
	require.NoError(t, err)
	return out
}
