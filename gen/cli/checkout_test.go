package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckoutOf: a binary built from a clone replaces opgen with it; one
// built from the module cache (go install ...@version), with -trimpath,
// or from a directory that no longer holds opgen requires its version.
func TestCheckoutOf(t *testing.T) {
	tree := func(dir, module string) string {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "gen", "cli"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+module+"\n"), 0o644))
		return filepath.Join(dir, "gen", "cli", "checkout.go")
	}
	tmp := t.TempDir()
	clone := filepath.Join(tmp, "opgen")
	cases := []struct {
		name, file, want string
	}{
		{"a clone", tree(clone, opgenModule), clone},
		{"the module cache", tree(filepath.Join(tmp, "mod", "github.com", "opgen-sdk", "opgen@v0.1.0"), opgenModule), ""},
		{"another module", tree(filepath.Join(tmp, "fork"), "example.com/fork"), ""},
		{"gone", filepath.Join(tmp, "gone", "gen", "cli", "checkout.go"), ""},
		{"-trimpath", opgenModule + "/gen/cli/checkout.go", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, checkoutOf(tc.file))
		})
	}
}

// TestBuiltFromCheckout: this test binary is built from the checkout it
// sits in.
func TestBuiltFromCheckout(t *testing.T) {
	if !filepath.IsAbs(sourceFile) {
		t.Skip("built with -trimpath, which leaves no source path to find the checkout by: run without it")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	assert.Equal(t, root, BuiltFromCheckout())
	dir, found := replaceOrCheckout("")
	assert.Equal(t, root, dir)
	assert.True(t, found)
	dir, found = replaceOrCheckout("elsewhere")
	assert.Equal(t, "elsewhere", dir)
	assert.False(t, found, "--replace wins")
}
