package gen

import (
	"context"
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

// TestNoOpRecordsWhatTheStampMissed: the run that generates walks the
// project right after writing, so it cannot record the directories it
// wrote into; the first no-op after it records them, and the no-ops
// after that read no directory and leave the stamp as it is.
func TestNoOpRecordsWhatTheStampMissed(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/p\n\ngo 1.26\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "apis/v1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "apis/v1/types.go"), []byte("package v1\n\ntype A struct{}\n"), 0o644))
	apis := filepath.Join(root, "apis/v1")
	// As the generating run leaves it: changed within racyDir of the
	// run's walk, however long the run takes on this machine.
	soon := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(apis, soon, soon))
	opts := Options{Root: root, StampDir: t.TempDir()}
	run := func() *Result {
		res, err := Run(context.Background(), opts, map[string]Generator{})
		require.NoError(t, err)
		return res
	}
	o, err := opts.withDefaults()
	require.NoError(t, err)
	recorded := func() map[string]dirList { return stampDirs(openStamp(&o, nil).raw) }

	require.False(t, run().UpToDate)
	require.NotContains(t, recorded(), apis, "changed just before the run's walk: not recorded")

	old := time.Now().Add(-time.Minute)
	require.NoError(t, os.Chtimes(apis, old, old))
	require.True(t, run().UpToDate)
	require.Contains(t, recorded(), apis, "the first no-op records what it read")

	before, err := os.Stat(openStamp(&o, nil).file)
	require.NoError(t, err)
	p, err := newProject(o, recorded())
	require.NoError(t, err)
	assert.Zero(t, p.walk.read, "a no-op that reads no directory")
	require.True(t, run().UpToDate)
	after, err := os.Stat(openStamp(&o, nil).file)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "a no-op that read nothing leaves the stamp")
}
