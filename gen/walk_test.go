package gen

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoOpWalkTrustsOnlyUnchangedDirectories: a run lists again only the
// directories whose time changed since the stamp's run, and still finds
// a new package, a new file, a removed one and a new nested module; a
// directory changed just before the stamp's run is not trusted.
func TestNoOpWalkTrustsOnlyUnchangedDirectories(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, rel), []byte(content), 0o644))
	}
	write("go.mod", "module example.com/p\n\ngo 1.26\n")
	write("apis/v1/types.go", "package v1\n\ntype A struct{}\n")
	write("apis/v1/zz_generated.deepcopy.go", "package v1\n")
	write("apis/v1/sub/b.go", "package sub\n")
	// Every directory as if last changed a minute ago, beyond racyDir.
	old := time.Now().Add(-time.Minute)
	age := func() {
		require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				err = os.Chtimes(path, old, old)
			}
			return err
		}))
	}
	age()
	stamps := t.TempDir()
	opts := Options{Root: root, StampDir: stamps}
	p, err := NewProject(opts)
	require.NoError(t, err)
	generated := filepath.Join(root, "apis/v1/zz_generated.deepcopy.go")
	st := newStamp(p, nil)
	st.Save(map[string][]byte{generated: mustRead(t, generated)})
	require.Contains(t, st.dirs, filepath.Join(root, "apis/v1"))

	// A run as Run starts it: the walk trusts the stamp's directories.
	check := func() (*Project, bool) {
		o, err := opts.withDefaults()
		require.NoError(t, err)
		st := openStamp(&o, nil)
		dirs := stampDirs(st.raw)
		require.NotEmpty(t, dirs)
		p, err := newProject(o, dirs)
		require.NoError(t, err)
		st.load()
		st.project = p
		return p, st.UpToDate()
	}
	trusted, ok := check()
	require.True(t, ok)
	walked, err := NewProject(opts)
	require.NoError(t, err)
	assert.Equal(t, walked.Dirs, trusted.Dirs)
	assert.Equal(t, walked.sources, trusted.sources)

	cases := []struct {
		name           string
		change, revert func()
	}{
		{"a package appeared", func() { write("apis/v2/types.go", "package v2\n") }, func() { require.NoError(t, os.RemoveAll(filepath.Join(root, "apis/v2"))) }},
		{"a file appeared", func() { write("apis/v1/more.go", "package v1\n") }, func() { require.NoError(t, os.Remove(filepath.Join(root, "apis/v1/more.go"))) }},
		{"a file was removed", func() { require.NoError(t, os.Remove(filepath.Join(root, "apis/v1/sub/b.go"))) }, func() { write("apis/v1/sub/b.go", "package sub\n") }},
		{"a nested module appeared", func() { write("apis/v1/sub/go.mod", "module example.com/sub\n") }, func() { require.NoError(t, os.Remove(filepath.Join(root, "apis/v1/sub/go.mod"))) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.change()
			_, ok := check()
			assert.False(t, ok)
			tc.revert()
			age() // the directories' times as the stamp recorded them
			_, ok = check()
			assert.True(t, ok)
		})
	}

	// Changed just now: not recorded, so read again by the next run.
	write("apis/v1/more.go", "package v1\n")
	st = newStamp(p, nil)
	st.Save(map[string][]byte{generated: mustRead(t, generated)})
	assert.NotContains(t, st.dirs, filepath.Join(root, "apis/v1"))
	assert.Contains(t, st.dirs, filepath.Join(root, "apis/v1/sub"))
}
