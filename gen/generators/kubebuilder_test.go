package generators_test

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-tools/pkg/crd"
	"sigs.k8s.io/controller-tools/pkg/genall"
	"sigs.k8s.io/controller-tools/pkg/loader"
	ctrbac "sigs.k8s.io/controller-tools/pkg/rbac"
	"sigs.k8s.io/controller-tools/pkg/webhook"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/generators"
)

const kubebuilderProject = "../testdata/kubebuilder"

// TestKubebuilderLayoutWritesWhatControllerGenWrites runs opgen's
// kubebuilder layout and controller-tools' crd, rbac and webhook
// generators (what `controller-gen rbac:roleName=manager-role crd webhook`
// runs) on the same project, and compares every manifest, header and
// controller-gen's version annotation aside.
func TestKubebuilderLayoutWritesWhatControllerGenWrites(t *testing.T) {
	want := controllerGen(t, kubebuilderProject)
	got := opgenKubebuilder(t, kubebuilderProject)
	for _, path := range []string{
		"config/crd/bases/webapp.example.com_guestbooks.yaml",
		"config/crd/bases/webapp.example.com_visitors.yaml",
		"config/rbac/role.yaml",
		"config/webhook/manifests.yaml",
	} {
		require.Contains(t, want, path, "controller-gen wrote no %s", path)
		if assert.Contains(t, got, path, "opgen wrote no %s", path) {
			assert.Equal(t, stripVersion(want[path]), stripHeader(got[path]), path)
		}
	}
	assert.Len(t, manifests(got), len(want), "opgen wrote other manifests than controller-gen: %v", keys(got))
}

// TestKubebuilderLayoutWithoutOpgenControllers: a project that moved no
// controller gets no clients, no controller glue, no status accessors and
// no leader-election Role; its deep copies are written.
func TestKubebuilderLayoutWithoutOpgenControllers(t *testing.T) {
	got := opgenKubebuilder(t, kubebuilderProject)
	for path := range got {
		assert.False(t, strings.HasPrefix(path, "pkg/generated/"), "%s: no clients without opgen controllers", path)
		assert.NotEqual(t, "internal/controller/zz_generated.controllers.go", path, "no glue without opgen controllers")
		assert.NotEqual(t, "config/rbac/leader_election_role.yaml", path, "the manager's Lease has kubebuilder's Role")
		assert.NotEqual(t, "api/v1/zz_generated.accessors.go", path, "no accessors without opgen controllers")
	}
	assert.Contains(t, got, "api/v1/zz_generated.deepcopy.go")
}

func opgenKubebuilder(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	opts := gen.Options{Root: dir, DryRun: true, StampDir: "-", CRDDir: "config/crd/bases"}
	res, err := gen.Run(context.Background(), opts, generators.Kubebuilder())
	require.NoError(t, err)
	root, err := filepath.Abs(dir)
	require.NoError(t, err)
	out := map[string][]byte{}
	for abs, data := range res.Output.Files() {
		rel, err := filepath.Rel(root, abs)
		require.NoError(t, err)
		out[filepath.ToSlash(rel)] = data
	}
	return out
}

// controllerGen runs controller-tools' generators as
// `controller-gen rbac:roleName=manager-role crd webhook paths=./...
// output:crd:artifacts:config=config/crd/bases` does, into memory.
func controllerGen(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	var crdGen, rbacGen, webhookGen genall.Generator = crd.Generator{}, ctrbac.Generator{RoleName: generators.KubebuilderRoleName}, webhook.Generator{}
	rt, err := genall.Generators{&crdGen, &rbacGen, &webhookGen}.ForRoots(dir + "/...")
	require.NoError(t, err)
	files := map[string][]byte{}
	rt.OutputRules = genall.OutputRules{ByGenerator: map[*genall.Generator]genall.OutputRule{
		&crdGen:     memory{files, "config/crd/bases"},
		&rbacGen:    memory{files, "config/rbac"},
		&webhookGen: memory{files, "config/webhook"},
	}}
	var errs bytes.Buffer
	rt.ErrorWriter = &errs
	require.False(t, rt.Run(), "controller-gen failed: %s", errs.String())
	return files
}

// memory is a genall.OutputRule that keeps what is written, by path.
type memory struct {
	files map[string][]byte
	dir   string
}

func (m memory) Open(_ *loader.Package, item string) (io.WriteCloser, error) {
	return &memoryFile{files: m.files, path: m.dir + "/" + item}, nil
}

type memoryFile struct {
	bytes.Buffer
	files map[string][]byte
	path  string
}

func (f *memoryFile) Close() error {
	f.files[f.path] = f.Bytes()
	return nil
}

var versionAnnotation = regexp.MustCompile(`(?m)^  annotations:\n    controller-gen\.kubebuilder\.io/version: .*\n`)

func stripVersion(b []byte) string { return versionAnnotation.ReplaceAllString(string(b), "") }

func stripHeader(b []byte) string {
	return strings.TrimPrefix(string(b), "# "+gen.Header+"\n")
}

func manifests(files map[string][]byte) []string {
	var out []string
	for p := range files {
		if strings.HasSuffix(p, ".yaml") {
			out = append(out, p)
		}
	}
	return out
}

func keys(files map[string][]byte) []string {
	out := make([]string, 0, len(files))
	for p := range files {
		out = append(out, p)
	}
	return out
}
