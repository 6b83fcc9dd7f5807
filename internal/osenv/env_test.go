package osenv_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/internal/osenv"
)

func TestWriteFileAtomic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "file.txt")
	require.NoError(t, osenv.WriteFileAtomic(path, []byte("one"), 0o600))
	require.NoError(t, osenv.WriteFileAtomic(path, []byte("two"), 0o644))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "two", string(data))
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
}

// TestWriteFileAtomicFailureKeepsTheOldFile: a write that cannot finish
// (the path is a directory) leaves what was there.
func TestWriteFileAtomicFailureKeepsTheOldFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "taken")
	require.NoError(t, os.MkdirAll(filepath.Join(path, "child"), 0o755))
	require.Error(t, osenv.WriteFileAtomic(path, []byte("x"), 0o644))
	_, err := os.Stat(filepath.Join(path, "child"))
	require.NoError(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
}

func TestCacheDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/cache")
	t.Setenv("HOME", "/home/u")
	d, err := osenv.CacheDir("stamps")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(os.Getenv("XDG_CACHE_HOME"), "opgen", "stamps"), d)
}
