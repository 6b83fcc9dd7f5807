package gen

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/opgen-sdk/opgen/gen/diag"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRequireImportsStopsBeforeWriting: generated code that imports a
// package no module provides stops the run with the go command's word,
// and leaves go.mod as it was.
func TestRequireImportsStopsBeforeWriting(t *testing.T) {
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "")
	dir := t.TempDir()
	gomod := "module example.com/m\n\ngo 1.26\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "a"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a", "a.go"), []byte("package a\n"), 0o644))
	p, err := NewProject(Options{Root: dir, StampDir: "-"})
	require.NoError(t, err)
	out := NewOutput(&diag.Errors{})
	out.Go(filepath.Join(dir, "a", "zz_generated.x.go"), []byte("package a\n\nimport _ \"example.invalid/nothing\"\n"))
	_, err = requireImports(context.Background(), p, out, newStamp(p, nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "example.invalid/nothing")
	assert.Contains(t, err.Error(), "nothing was written")
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	require.NoError(t, err)
	assert.Equal(t, gomod, string(data), "go.mod is left as it was")
	assert.NoFileExists(t, filepath.Join(dir, "a", "zz_generated.x.go"))
}
