package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run runs the command that newCommand builds with args and returns what
// it printed on stderr and its error.
func run(t *testing.T, newCommand func() *cobra.Command, args ...string) (string, error) {
	t.Helper()
	cmd := newCommand()
	cmd.SetArgs(args)
	var stderr bytes.Buffer
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&stderr)
	cmd.SilenceUsage = true
	cmd.SilenceErrors = true
	err := cmd.ExecuteContext(context.Background())
	return stderr.String(), err
}

const releaseTypes = `package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Widget is a kind.
//
// +kubebuilder:object:root=true
type Widget struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
	Spec              WidgetSpec ` + "`json:\"spec\"`" + `
}

// WidgetSpec is the desired state.
type WidgetSpec struct {
	// Size is the size.
	// +optional
	Size SIZE ` + "`json:\"size,omitempty\"`" + `
}

// WidgetList is a list of Widget.
//
// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\"`" + `
	Items           []Widget ` + "`json:\"items\"`" + `
}
`

// TestReleaseThenGate: opgen generate says once that the gate is off
// until a release; opgen release records the CRD; from then on a breaking
// change fails opgen generate, at the field.
func TestReleaseThenGate(t *testing.T) {
	dir, err := os.MkdirTemp("testdata", "tmp-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	writeFile(t, filepath.Join(dir, "apis/v1/doc.go"), "// +groupName=release.example.com\npackage v1\n")
	writeFile(t, filepath.Join(dir, "apis/v1/types.go"), strings.Replace(releaseTypes, "SIZE", "int32", 1))
	stamps := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", stamps) // the no-op stamps of this test's runs

	out, err := run(t, newGenerateCommand, "-C", dir, "--only", "crd,compat", "./...")
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(out, "opgen: no released CRDs in config/released, so the API compatibility gate is off"), out)
	out, err = run(t, newGenerateCommand, "-C", dir, "--only", "crd,compat", "./...")
	require.NoError(t, err)
	assert.Empty(t, out, "a run that does nothing prints nothing")

	out, err = run(t, newReleaseCommand, "-C", dir)
	require.NoError(t, err)
	assert.Equal(t, "opgen: write config/released/release.example.com_widgets.yaml\n", out)
	out, err = run(t, newReleaseCommand, "-C", dir)
	require.NoError(t, err)
	assert.Equal(t, "opgen: config/released already holds these CRDs\n", out)

	out, err = run(t, newGenerateCommand, "-C", dir, "--only", "crd,compat", "-v", "./...")
	require.NoError(t, err)
	assert.NotContains(t, out, "up to date", "the release is an input of the run: a new one makes it a full run")
	assert.NotContains(t, out, "gate is off")
	writeFile(t, filepath.Join(dir, "apis/v1/types.go"), strings.Replace(releaseTypes, "SIZE", "string", 1))
	_, err = run(t, newGenerateCommand, "-C", dir, "--only", "crd,compat", "./...")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "apis/v1/types.go:18:2: Widget v1 spec.size: type changed from integer (int32) to string, which breaks objects of the last release (config/released/release.example.com_widgets.yaml) [compat rule type-changed]"), err.Error())
	_, err = run(t, newReleaseCommand, "-C", dir)
	require.Error(t, err, "release runs the gate too")
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}
