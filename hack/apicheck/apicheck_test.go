package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnlistedChangeFails makes a release of a small module, changes the
// signature of an interface's method (as plug.DescendantStore's Prune
// changed), and checks that the change fails the check until the
// changelog's Unreleased section names it; an added method of a struct is
// compatible and needs no line.
func TestUnlistedChangeFails(t *testing.T) {
	repo := t.TempDir()
	write(t, repo, "go.mod", "module example.com/sdk\n\ngo 1.26\n")
	write(t, repo, "pkg/plug/plug.go", "package plug\n\n// Store prunes.\ntype Store interface {\n\tPrune(keep map[string]bool) (int, error)\n}\n\n// Action is an action.\ntype Action struct{}\n")
	write(t, repo, "pkg/plug/internal/x/x.go", "package x\n\n// X changes freely.\nfunc X() {}\n")
	write(t, repo, "CHANGELOG.md", "# Changelog\n\n## Unreleased\n\n## v0.1.0\n\nFirst release.\n")
	git(t, repo, "init", "-q")
	git(t, repo, "add", ".")
	git(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "v0.1.0")
	release := strings.TrimSpace(git(t, repo, "rev-parse", "HEAD"))

	write(t, repo, "pkg/plug/plug.go", "package plug\n\n// Store prunes.\ntype Store interface {\n\tPrune(keep map[string]bool, kinds func(string) bool) (int, error)\n}\n\n// Action is an action.\ntype Action struct{}\n\n// Do is new: compatible.\nfunc (Action) Do() {}\n")
	write(t, repo, "pkg/plug/internal/x/x.go", "package x\n\n// X changes freely.\nfunc X(int) {}\n")
	opts := Options{Repo: repo, Base: release, Patterns: []string{"./pkg/..."}, Changelog: "CHANGELOG.md"}
	res, err := Check(opts)
	require.NoError(t, err)
	require.Len(t, res.Incompatible, 1, "only the interface's method changed incompatibly; internal packages are not the contract")
	require.Len(t, res.Unlisted, 1)
	assert.Equal(t, "plug.Store.Prune", res.Unlisted[0].Name())

	write(t, repo, "CHANGELOG.md", "# Changelog\n\n## Unreleased\n\n- `plug.Store.Prune` takes the kinds to prune: pass `func(string) bool { return true }` for all.\n\n## v0.1.0\n\nFirst release.\n")
	res, err = Check(opts)
	require.NoError(t, err)
	assert.Empty(t, res.Unlisted, "a listed change passes")

	write(t, repo, "CHANGELOG.md", "# Changelog\n\n## Unreleased\n\n## v0.1.0\n\n- `plug.Store.Prune` listed under the old release does not count.\n")
	res, err = Check(opts)
	require.NoError(t, err)
	assert.Len(t, res.Unlisted, 1, "only the Unreleased section counts")
}

// TestSDKAgainstLastRelease runs the check on the SDK itself, as make
// verify does: every incompatible change of pkg/... since the release of
// release.txt is in CHANGELOG.md.
func TestSDKAgainstLastRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the SDK's packages twice (about a minute); run without -short")
	}
	tag, commit, err := readRelease("release.txt")
	require.NoError(t, err)
	if out, err := exec.Command("git", "-C", "../..", "cat-file", "-e", commit+"^{commit}").CombinedOutput(); err != nil {
		t.Skipf("the clone lacks %s (%s), the commit of %s: a clone with main's history runs this check (%s)", commit, tag, tag, out)
	}
	res, err := Check(Options{Repo: "../..", Base: commit, Patterns: []string{"./pkg/..."}, Changelog: "CHANGELOG.md"})
	require.NoError(t, err)
	assert.Empty(t, res.Unlisted, "incompatible changes since %s missing from CHANGELOG.md", tag)
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
	return string(out)
}
