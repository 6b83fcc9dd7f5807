package gen_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/generators"
	"github.com/opgen-sdk/opgen/internal/gentest"
)

// TestCodeGeneratorStyle runs every generator on API types written for
// code-generator (testdata/codegen/README.md says what they exercise) and
// compares with the committed output, which must build.
func TestCodeGeneratorStyle(t *testing.T) {
	files := gentest.Run(t, "testdata/codegen", generators.All())
	gentest.Compare(t, "testdata/codegen", files)

	crd := string(files["config/crd/example.codegen.opgen.dev_clustertesttypes.yaml"])
	assert.Contains(t, crd, "scope: Cluster", "+genclient:nonNamespaced makes the CRD cluster-scoped too")
	register := string(files["apis/example/v1/zz_generated.register.go"])
	for _, decl := range []string{"var GroupVersion = ", "Install     = localSchemeBuilder.AddToScheme", "&TestSubresource{}"} {
		assert.Contains(t, register, decl, "register-gen's declarations are kept")
	}
	assert.NotContains(t, string(files["apis/example/v1/zz_generated.deepcopy.go"]), "func (in *ReadOnly) DeepCopyObject", "the hand-written DeepCopyObject is kept")
	for _, dir := range []string{"example", "example2", "hyphens"} {
		assert.Contains(t, files, "pkg/generated/clientset/versioned/typed/"+dir+"/v1/"+dir+"_client.go", "client packages are named after the API directories")
	}

	if testing.Short() {
		t.Skip("building the generated code takes a minute; run without -short")
	}
	out, err := exec.Command("go", "build", "./testdata/codegen/...").CombinedOutput()
	require.NoError(t, err, "the generated code must build:\n%s", strings.TrimSpace(string(out)))
}

// TestKindWithoutListIsAWarning: controller-gen accepts a root kind
// without a list type; opgen generates its CRD and deep copies, and warns
// that it has no client, with the fix.
func TestKindWithoutListIsAWarning(t *testing.T) {
	types := fmt.Sprintf(fuzzTypes, "", "", "string")
	types = types[:strings.Index(types, "// +kubebuilder:object:root=true\ntype WidgetList")]
	dir := writeFuzzProject(t, types)
	res, err := gen.Run(context.Background(), gen.Options{Root: dir, DryRun: true, StampDir: "-"}, generators.All())
	require.NoError(t, err)
	require.Len(t, res.Warnings, 1)
	assert.Contains(t, res.Warnings[0].Error(), "apis/v1/types.go:20:6: kind Widget has no list type: its CRD and deep copies are generated, but no typed client")
	root := mustAbs(t, dir)
	assert.Contains(t, res.Output.Files(), filepath.Join(root, "config/crd/fuzz.example.com_widgets.yaml"))
	assert.Contains(t, string(res.Output.Files()[filepath.Join(root, "apis/v1/zz_generated.register.go")]), "AddKnownTypes(SchemeGroupVersion, &Widget{})")
}
