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
	"github.com/opgen-sdk/opgen/gen/internal/gentest"
)

// TestCodeGeneratorStyle runs every generator on API types written for
// code-generator (testdata/codegen/README.md says what they exercise) and
// compares with the committed output, which must build.
func TestCodeGeneratorStyle(t *testing.T) {
	files := gentest.Run(t, "testdata/codegen", generators.All())
	gentest.Compare(t, "testdata/codegen", files)

	crd := string(files["config/crd/example.codegen.opgen.dev_clustertesttypes.yaml"])
	assert.Contains(t, crd, "scope: Cluster", "+kubebuilder:resource:scope=Cluster beside +genclient:nonNamespaced")
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

// TestNonNamespacedWithoutScope: +genclient:nonNamespaced without
// +kubebuilder:resource:scope=Cluster leaves the CRD namespaced, as
// controller-gen writes it (a marker controller-gen ignores never changes
// the CRD), with a warning that gives the marker; --strict refuses it.
func TestNonNamespacedWithoutScope(t *testing.T) {
	dir := writeFuzzProject(t, fmt.Sprintf(fuzzTypes, "+genclient\n// +genclient:nonNamespaced", "", "string"))
	res, err := gen.Run(context.Background(), gen.Options{Root: dir, DryRun: true, StampDir: "-"}, generators.All())
	require.NoError(t, err)
	require.Len(t, res.Warnings, 1)
	assert.Contains(t, res.Warnings[0].Error(), "apis/v1/types.go:20:1: Widget: +genclient:nonNamespaced makes its client cluster-scoped, but without +kubebuilder:resource:scope=Cluster its CRD is namespaced, as controller-gen writes it")
	crd := string(res.Output.Files()[filepath.Join(mustAbs(t, dir), "config/crd/fuzz.example.com_widgets.yaml")])
	assert.Contains(t, crd, "scope: Namespaced")

	_, err = gen.Run(context.Background(), gen.Options{Root: dir, DryRun: true, StampDir: "-", StrictMarkers: true}, generators.All())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "add +kubebuilder:resource:scope=Cluster")
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
	assert.NotNil(t, res.Output.Files()[filepath.Join(root, "config/crd/fuzz.example.com_widgets.yaml")])
	assert.Contains(t, string(res.Output.Files()[filepath.Join(root, "apis/v1/zz_generated.register.go")]), "AddKnownTypes(SchemeGroupVersion, &Widget{})")
}

// TestControllerGenLayouts: what controller-gen accepts, opgen generates,
// saying what it did differently with warnings: a package in a directory
// not named after its version (+versionName), a kind found by its
// structure alone, and a package with a group but no kind.
func TestControllerGenLayouts(t *testing.T) {
	kind := "package plural\n\nimport metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n\n" +
		"type TestQuota struct {\n\tmetav1.TypeMeta `json:\",inline\"`\n\tmetav1.ObjectMeta `json:\"metadata,omitempty\"`\n\tTest string `json:\"test,omitempty\"`\n}\n\n" +
		"type TestQuotaList struct {\n\tmetav1.TypeMeta `json:\",inline\"`\n\tmetav1.ListMeta `json:\"metadata,omitempty\"`\n\tItems []TestQuota `json:\"items\"`\n}\n"
	dir := writeProject(t, map[string]string{
		"plural/doc.go":   "// +groupName=plural.example.com\n// +versionName=v1\npackage plural\n",
		"plural/types.go": kind,
		"hub/doc.go":      "// +groupName=hub.example.com\npackage hub\n\n// Shared is shared.\ntype Shared struct{}\n",
	})
	res, err := gen.Run(context.Background(), gen.Options{Root: dir, DryRun: true, StampDir: "-"}, generators.All())
	require.NoError(t, err)
	rel := (&gen.RunError{Errors: res.Warnings}).Relative(mustAbs(t, dir))
	require.Len(t, rel.Errors, 3, "%v", rel)
	assert.Contains(t, rel.Errors[0].Error(), "hub/doc.go:1:1: package github.com/opgen-sdk/opgen/gen/"+filepath.ToSlash(dir)+"/hub declares +groupName=hub.example.com but no kind, so it gets no CRD, registration or client; a kind is")
	assert.Contains(t, rel.Errors[1].Error(), "plural/doc.go:1:1: package github.com/opgen-sdk/opgen/gen/"+filepath.ToSlash(dir)+"/plural is the version v1 of plural.example.com, but its directory is plural: its CRDs, deep copies and registration are generated, but no client")
	assert.Contains(t, rel.Errors[2].Error(), "plural/types.go:5:6: TestQuota embeds metav1.TypeMeta and metav1.ObjectMeta but has no +kubebuilder:object:root=true")
	root := mustAbs(t, dir)
	assert.NotNil(t, res.Output.Files()[filepath.Join(root, "config/crd/plural.example.com_testquotas.yaml")], "the CRD, as controller-gen writes it")
	assert.Contains(t, string(res.Output.Files()[filepath.Join(root, "plural/zz_generated.deepcopy.go")]), "func (in *TestQuotaList) DeepCopyObject() runtime.Object")
}

// TestNoKindSaysSo: a run that reads packages but finds no kind says so,
// naming the packages and what makes a kind.
// TestTypesLibraryIsNoSurprise: a package of embeddable types that asks
// only for deep copies gets them, with no warning about kinds.
func TestTypesLibraryIsNoSurprise(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"apis/doc.go":   "// +kubebuilder:object:generate=true\npackage apis\n",
		"apis/types.go": "package apis\n\ntype Status struct{ ObservedGeneration int64 `json:\"observedGeneration,omitempty\"` }\n",
	})
	res, err := gen.Run(context.Background(), gen.Options{Root: dir, DryRun: true, StampDir: "-"}, generators.All())
	require.NoError(t, err)
	assert.Empty(t, res.Warnings)
}

func TestNoKindSaysSo(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"apis/v1/doc.go":   "// +groupName=x.example.com\npackage v1\n",
		"apis/v1/types.go": "package v1\n\n// +genclient\ntype NotAKind struct{ A string }\n",
		"cmd/main.go":      "package main\n\nfunc main() {}\n",
	})
	res, err := gen.Run(context.Background(), gen.Options{Root: dir, DryRun: true, StampDir: "-"}, generators.All())
	require.NoError(t, err)
	require.Len(t, res.Warnings, 1)
	pkg := "github.com/opgen-sdk/opgen/gen/" + filepath.ToSlash(dir)
	assert.Equal(t, "no kind found, so no CRD, registration or client was generated; read: "+pkg+"/apis/v1 (+groupName=x.example.com, no kind), "+pkg+"/cmd (no +groupName); a kind is a struct that embeds metav1.TypeMeta and metav1.ObjectMeta, in a package whose doc.go has +groupName=<group>, marked +kubebuilder:object:root=true (kubebuilder's style) or +genclient and +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object (code-generator's)", res.Warnings[0].Error())
}
