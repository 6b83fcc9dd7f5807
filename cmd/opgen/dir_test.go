package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryProjectCommandTakesDir: each command that works in a project
// has -C/--dir, as go, git and make do.
func TestEveryProjectCommandTakesDir(t *testing.T) {
	root := newRootCommand()
	for _, path := range [][]string{
		{"init"}, {"create", "api"}, {"generate"}, {"manifests"}, {"dockerfile"},
		{"image"}, {"rbac", "audit"}, {"release"}, {"adopt"}, {"upgrade"},
	} {
		cmd, _, err := root.Find(path)
		require.NoError(t, err, path)
		f := cmd.Flags().Lookup("dir")
		if assert.NotNil(t, f, "opgen %v has no --dir", path) {
			assert.Equal(t, "C", f.Shorthand, path)
		}
	}
}

// TestDirRunsInTheProject: -C makes the command's relative paths the
// project's, and opgen init -C makes a missing directory. Not parallel:
// -C changes the process's working directory (t.Chdir restores it).
func TestDirRunsInTheProject(t *testing.T) {
	t.Chdir(".")
	dir := t.TempDir()
	testdata, err := filepath.Abs("../../pkg/manifest/testdata")
	require.NoError(t, err)
	run := func(cmd func() *cobra.Command, args ...string) (string, error) {
		c := cmd()
		var out bytes.Buffer
		c.SetOut(&out)
		c.SetErr(&bytes.Buffer{})
		c.SetArgs(args)
		c.SilenceUsage, c.SilenceErrors = true, true
		err := c.Execute()
		return out.String(), err
	}
	_, err = run(newDockerfileCommand, "-C", dir)
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(dir, "Dockerfile"))

	out, err := run(newManifestsCommand, "--dir", testdata, "--name", "widget-operator", "--config-dir", "config")
	require.NoError(t, err)
	assert.Contains(t, out, "kind: CustomResourceDefinition")

	_, err = run(newManifestsCommand, "-C", filepath.Join(dir, "missing"))
	require.ErrorContains(t, err, "-C "+filepath.Join(dir, "missing"))

	made := filepath.Join(dir, "new", "project")
	require.NoError(t, chdir(made, true))
	wd, err := os.Getwd()
	require.NoError(t, err)
	assert.Equal(t, made, wd)
}
