package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/modfile"

	"github.com/opgen-sdk/opgen/gen/cli"
)

// TestVersionPrintsThePinnedVersions: opgen version reports the k8s.io/api
// and controller-tools versions go.mod requires.
func TestVersionPrintsThePinnedVersions(t *testing.T) {
	data, err := os.ReadFile("../../go.mod")
	require.NoError(t, err)
	mf, err := modfile.Parse("go.mod", data, nil)
	require.NoError(t, err)
	required := map[string]string{}
	for _, r := range mf.Require {
		required[r.Mod.Path] = r.Mod.Version
	}
	require.NotEmpty(t, required["k8s.io/api"])
	require.NotEmpty(t, required["sigs.k8s.io/controller-tools"])

	cmd := newVersionCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs(nil)
	require.NoError(t, cmd.Execute())
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		i := strings.LastIndex(l, " ")
		lines[strings.TrimSpace(l[:i])] = l[i+1:]
	}
	assert.Equal(t, required["k8s.io/api"], lines["kubernetes (k8s.io/api)"], out.String())
	assert.Equal(t, required["sigs.k8s.io/controller-tools"], lines["controller-tools"], out.String())
	assert.NotEmpty(t, lines["opgen"], out.String())
}

// TestVersionFlag: opgen --version prints the version opgen version
// starts with, as controller-gen --version does.
func TestVersionFlag(t *testing.T) {
	for _, flag := range []string{"--version", "-v"} {
		root := newRootCommand()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs([]string{flag})
		require.NoError(t, root.Execute())
		assert.Equal(t, "opgen version "+cli.DisplayVersion()+"\n", out.String(), flag)
	}
}
