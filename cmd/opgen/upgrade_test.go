package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen/scaffold"
)

func runUpgrade(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := newUpgradeCommand()
	var out bytes.Buffer
	cmd.SetArgs(append([]string{"-C", dir}, args...))
	cmd.SetOut(&out)
	cmd.SetErr(&bytes.Buffer{})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(data)
	}
	return out
}

// TestUpgradeAnOldProject upgrades a project scaffolded by an opgen from
// before make uninstall/deploy and before the scaffold recorded its
// version (testdata/upgrade/old-project).
func TestUpgradeAnOldProject(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "widget-operator")
	require.NoError(t, os.CopyFS(dir, os.DirFS("testdata/upgrade/old-project")))
	before := snapshot(t, dir)

	out, err := runUpgrade(t, dir)
	require.NoError(t, err)
	assert.Contains(t, out, "scaffolded by an opgen from before the scaffold recorded its version")
	assert.Contains(t, out, "--- a/Makefile\n+++ b/Makefile\n")
	assert.Contains(t, out, "+.PHONY: uninstall\n")
	assert.Contains(t, out, "+# Scaffolded by opgen v0.1.0.\n")
	assert.Contains(t, out, "--- a/generate.go\n")
	assert.NotContains(t, out, "a/Dockerfile", "the Dockerfile is up to date")
	assert.Contains(t, out, "no base: this opgen keeps the templates of v0.1.0 only")
	assert.Contains(t, out, "[Makefile generate.go .gitignore] would change: run opgen upgrade --write")
	assert.Equal(t, before, snapshot(t, dir), "without --write nothing is written")

	out, err = runUpgrade(t, dir, "--write")
	require.NoError(t, err)
	assert.Contains(t, out, "wrote [Makefile generate.go .gitignore]")
	after := snapshot(t, dir)
	opts, err := scaffold.ReadProject(dir)
	require.NoError(t, err)
	want, err := scaffold.RenderFiles(opts)
	require.NoError(t, err)
	assert.Equal(t, string(want["Makefile"]), after["Makefile"])
	assert.Equal(t, string(want["generate.go"]), after["generate.go"])
	for _, mine := range []string{"main.go", "go.mod"} {
		assert.Equal(t, before[mine], after[mine], "%s is the user's", mine)
	}
	assert.Equal(t, "opgen v0.1.0", scaffold.ScaffoldedBy(dir), "the scaffold now records its opgen")

	out, err = runUpgrade(t, dir)
	require.NoError(t, err)
	assert.Contains(t, out, "up to date: nothing to change")
}

func TestUpgradeKeepsTheProjectsName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	created, err := scaffold.InitProject(dir, scaffold.ProjectOptions{Module: "example.com/things", Name: "widgets", OpgenVersion: "v0.2.0"})
	require.NoError(t, err)
	require.NotEmpty(t, created.Files)
	out, err := runUpgrade(t, dir)
	require.NoError(t, err)
	assert.Contains(t, out, "project widgets (example.com/things), scaffolded by opgen v0.2.0")
	assert.Contains(t, out, "up to date", "a project of this opgen has nothing to upgrade")
}

func TestUpgradeRefusesOtherFiles(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "p")
	require.NoError(t, os.CopyFS(dir, os.DirFS("testdata/upgrade/old-project")))
	_, err := runUpgrade(t, dir, "go.mod")
	assert.ErrorContains(t, err, "go.mod is not a file opgen upgrade merges: name one of Makefile, Dockerfile, generate.go, .gitignore, main.go, README.md")
	_, err = runUpgrade(t, dir, "--base", "v0.0.9")
	assert.ErrorContains(t, err, "--base v0.0.9: this opgen keeps the templates of v0.1.0 only")
	_, err = runUpgrade(t, t.TempDir())
	assert.ErrorContains(t, err, "run opgen upgrade in the project's root")

	out, err := runUpgrade(t, dir, "--write", "generate.go")
	require.NoError(t, err)
	assert.Contains(t, out, "wrote [generate.go]")
	assert.NotContains(t, out, "Makefile")
}
