package compat_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/compat"
	"github.com/opgen-sdk/opgen/gen/crd"
)

const widgetTypes = `package v1

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
%s
type WidgetSpec struct {
	// Size is the size.
	// +optional
	Size int32 ` + "`json:\"size,omitempty\"`" + `
%s}

// WidgetList is a list of Widget.
//
// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\"`" + `
	Items           []Widget ` + "`json:\"items\"`" + `
}
`

const legacyField = "\t// Legacy is not used any more.\n\t// +optional\n\tLegacy string `json:\"legacy,omitempty\"`\n"

// project writes a project of one kind, Widget, into a new directory
// under testdata (the module's, so that it loads), removed when t ends.
func project(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("testdata", "tmp-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	write(t, dir, "apis/v1/doc.go", "// +groupName=compat.example.com\npackage v1\n")
	return dir
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func types(specDoc, fields string) string {
	return strings.Replace(strings.Replace(widgetTypes, "%s\n", specDoc+"\n", 1), "%s", fields, 1)
}

func generate(dir string) (*gen.Result, *compat.Generator, error) {
	gate := &compat.Generator{}
	res, err := gen.Run(context.Background(), gen.Options{Root: dir, DryRun: true, StampDir: "-"},
		map[string]gen.Generator{"crd": crd.Generator{}, "compat": gate})
	return res, gate, err
}

// TestReleaseCycle follows a project through two releases: the first
// release turns the gate on; a removed field then fails generation until
// a marker acknowledges it; the next release records the removal, names
// the marker as done, and from then on the marker acknowledges nothing.
func TestReleaseCycle(t *testing.T) {
	ctx := context.Background()
	dir := project(t)
	write(t, dir, "apis/v1/types.go", types("", legacyField))
	_, gate, err := generate(dir)
	require.NoError(t, err)
	assert.True(t, gate.Off, "no release yet: the gate is off")
	assert.Contains(t, gate.Note("config/released"), "no released CRDs in config/released, so the API compatibility gate is off")

	res, err := compat.Release(ctx, gen.Options{Root: dir, StampDir: "-"})
	require.NoError(t, err)
	released := filepath.Join(dir, "config/released/compat.example.com_widgets.yaml")
	require.Len(t, res.Changes, 1)
	assert.Equal(t, gen.Change{Path: mustAbs(t, released), Op: "write"}, res.Changes[0])
	data, err := os.ReadFile(released)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), compat.ReleaseHeader+"\n---\napiVersion: apiextensions.k8s.io/v1\n"), "%.200s", data)
	assert.Contains(t, string(data), "legacy:")
	assert.NotContains(t, string(data), gen.Header, "no generator owns the released CRDs")

	write(t, dir, "apis/v1/types.go", types("", ""))
	_, _, err = generate(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Widget v1 spec.legacy: the field is gone")
	_, err = compat.Release(ctx, gen.Options{Root: dir, StampDir: "-"})
	require.Error(t, err, "a release that breaks the last one without acknowledgement fails")
	data2, _ := os.ReadFile(released)
	assert.Equal(t, string(data), string(data2), "a failed release writes nothing")

	write(t, dir, "apis/v1/types.go", types(`// +opgen:compat:allow=field-removed field=legacy reason="nobody set it"`, ""))
	_, gate, err = generate(dir)
	require.NoError(t, err)
	require.Len(t, gate.Acknowledged, 1)
	res, err = compat.Release(ctx, gen.Options{Root: dir, StampDir: "-"})
	require.NoError(t, err)
	require.Len(t, res.Changes, 1)
	require.Len(t, res.Done, 1, "the release lists the marker it made stale")
	assert.Equal(t, 15, res.Done[0].Line)
	data, _ = os.ReadFile(released)
	assert.NotContains(t, string(data), "legacy:")

	gres, _, err := generate(dir)
	require.NoError(t, err)
	require.Len(t, gres.Warnings, 1)
	assert.Contains(t, gres.Warnings[0].Error(), "types.go:15:1: +opgen:compat:allow=field-removed acknowledges nothing")

	res, err = compat.Release(ctx, gen.Options{Root: dir, StampDir: "-"})
	require.NoError(t, err)
	assert.Empty(t, res.Changes, "a release of the same CRDs writes nothing")
}

// TestReleaseRemovesGoneKinds: a kind the project no longer has is a
// warning of the gate (deleting a CRD deletes its objects), and the next
// release removes its released CRD, but no file it did not write.
func TestReleaseRemovesGoneKinds(t *testing.T) {
	dir := project(t)
	write(t, dir, "apis/v1/types.go", types("", ""))
	write(t, dir, "config/released/compat.example.com_gadgets.yaml", compat.ReleaseHeader+"\n"+strings.ReplaceAll(strings.ReplaceAll(widgetCRD, "widgets", "gadgets"), "Widget", "Gadget"))
	write(t, dir, "config/released/notes.yaml", "# my own file\n")
	res, _, err := generate(dir)
	require.NoError(t, err)
	require.Len(t, res.Warnings, 1)
	assert.Contains(t, res.Warnings[0].Error(), "config/released/compat.example.com_gadgets.yaml: the project no longer has the kind Gadget (gadgets.compat.example.com) of the last release: deleting its CRD from a cluster deletes every object of the kind")

	rel, err := compat.Release(context.Background(), gen.Options{Root: dir, StampDir: "-"})
	require.NoError(t, err)
	var ops []string
	for _, c := range rel.Changes {
		ops = append(ops, c.Op+" "+filepath.Base(c.Path))
	}
	assert.Equal(t, []string{"write compat.example.com_widgets.yaml", "remove compat.example.com_gadgets.yaml"}, ops)
	assert.FileExists(t, filepath.Join(dir, "config/released/notes.yaml"))
}

const widgetCRD = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.compat.example.com
spec:
  group: compat.example.com
  names:
    kind: Widget
    listKind: WidgetList
    plural: widgets
    singular: widget
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
`

// TestBaselineFromGitRef reads the baseline from a git ref: the CRD
// directory as a commit has it, in a repository whose root is above the
// project's.
func TestBaselineFromGitRef(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	run("init", "-q")
	write(t, repo, "op/config/crd/compat.example.com_widgets.yaml", "# Code generated by opgen. DO NOT EDIT.\n"+widgetCRD)
	write(t, repo, "op/config/crd/kustomization.yaml", "resources: [compat.example.com_widgets.yaml]\n")
	run("add", ".")
	run("commit", "-q", "-m", "v1")
	run("tag", "v1.0.0")
	require.NoError(t, os.RemoveAll(filepath.Join(repo, "op/config")))

	p := &gen.Project{Options: gen.Options{Root: filepath.Join(repo, "op"), CRDDir: "config/crd", BaselineRef: "v1.0.0"}}
	b, err := compat.LoadBaseline(p)
	require.NoError(t, err)
	require.Len(t, b.CRDs, 1)
	assert.Equal(t, "git ref v1.0.0", b.Source)
	assert.Equal(t, "v1.0.0:config/crd/compat.example.com_widgets.yaml", b.CRDs[0].File)
	assert.Equal(t, "widgets.compat.example.com", b.CRDs[0].CRD.Name)

	p.BaselineRef = "v9"
	_, err = compat.LoadBaseline(p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--baseline-ref v9: git ls-tree")
	p.BaselineRef, p.CRDDir = "v1.0.0", "deploy/crd"
	_, err = compat.LoadBaseline(p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--baseline-ref v1.0.0: no CustomResourceDefinition in deploy/crd/ at v1.0.0")
}

// TestNoBaselineNoGate: without released CRDs the gate is off, and says
// so; an empty directory is no baseline either.
func TestNoBaselineNoGate(t *testing.T) {
	dir := project(t)
	p := &gen.Project{Options: gen.Options{Root: mustAbs(t, dir), ReleasedDir: "config/released"}}
	b, err := compat.LoadBaseline(p)
	require.NoError(t, err)
	assert.Nil(t, b)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "config/released"), 0o755))
	b, err = compat.LoadBaseline(p)
	require.NoError(t, err)
	assert.Nil(t, b)
}

func mustAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	return abs
}
