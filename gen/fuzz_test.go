package gen_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/generators"
)

// fuzzTypes is a kind whose type, one of its fields and that field's type
// take fuzzed markers and a fuzzed field type.
const fuzzTypes = `package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/runtime"
)

var (
	_ = resource.Quantity{}
	_ = intstr.IntOrString{}
	_ runtime.Object
)

// Widget is a fuzzed kind.
//
// +kubebuilder:object:root=true
// %s
type Widget struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
	Spec WidgetSpec ` + "`json:\"spec\"`" + `
}

// WidgetSpec is the desired state.
type WidgetSpec struct {
	// Field is fuzzed.
	// %s
	Field %s ` + "`json:\"field\"`" + `
}

// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\"`" + `
	Items           []Widget ` + "`json:\"items\"`" + `
}
`

// fuzzSeeds are inputs that once crashed opgen or a library it calls, and
// the shapes of the common markers and field types.
var fuzzSeeds = []struct{ kindMarker, fieldMarker, fieldType string }{
	{"+kubebuilder:subresource:status", "+optional", "string"},
	{"+kubebuilder:metadata:annotations=foo", "", "int32"},
	{"+kubebuilder:metadata:annotations=\"a=b\",c", "", "int32"},
	{"+kubebuilder:metadata:labels={\"a\"}", "", "int32"},
	{"+kubebuilder:resource:scope=Cluster,path=widgets", "", "map[string]any"},
	{"", "", "map[string]interface{}"},
	{"", "", "map[string][]any"},
	{"", "", "[]map[string]*any"},
	{"", "", "runtime.RawExtension"},
	{"", "", "*runtime.RawExtension"},
	{"", "", "runtime.Object"},
	{"", "", "map[runtime.Object]string"},
	{"", "", "map[[2]int]string"},
	{"", "", "struct{ A any }"},
	{"", "", "chan int"},
	{"", "", "func()"},
	{"", "", "float64"},
	{"", "", "complex128"},
	{"", "", "uintptr"},
	{"", "", "[3]resource.Quantity"},
	{"", "", "map[string]intstr.IntOrString"},
	{"", "", "*metav1.Time"},
	{"", "", "error"},
	{"", "", "Undefined"},
	{"", "", "[]"},
	{"", "+kubebuilder:validation:Minimum=1", "string"},
	{"", "+kubebuilder:validation:Enum=a;b", "int"},
	{"", "+kubebuilder:validation:XValidation:rule=\"self > 1\"", "int"},
	{"", "+kubebuilder:default={a: 1}", "map[string]string"},
	{"", "+kubebuilder:validation:Pattern=`(`", "string"},
	{"+kubebuilder:printcolumn:name=A,type=string", "", "string"},
	{"+kubebuilder:printcolumn:name=A,type=string,JSONPath=", "", "string"},
	{"+kubebuilder:object:root=false", "", "string"},
	{"+kubebuilder:object:generate=false", "", "string"},
	{"+k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object", "", "string"},
	{"+genclient", "", "string"},
	{"+genclient:nonNamespaced", "", "string"},
	{"+genclient:method=Scale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale", "", "string"},
	{"+genclient:skipVerbs=get", "", "string"},
	{"+opgen:controller:owns=apps/v1.Deployment", "", "string"},
	{"+opgen:controller:owns=", "", "string"},
	{"+opgen:controller:reconcileEvery=", "", "string"},
	{"+opgen:controller:watches=v1.Pod,map=", "", "string"},
	{"+opgen:controller:reads=v1.", "", "string"},
	{"+kubebuilder:storageversion", "", "string"},
	{"+kubebuilder:skip", "", "string"},
	{"+kubebuilder:skipversion", "", "string"},
	{"+groupName=", "", "string"},
	{"+", "+", "string"},
	{"+kubebuilder:", "+kubebuilder:", "string"},
	{"+kubebuilder:validation:Minimum=\x00", "", "string"},
	{"+kubebuilder:validation:Minimum={{{{", "", "string"},
}

// FuzzGenerate runs every generator on a project whose kind takes fuzzed
// markers and a fuzzed field type. Whatever the input, a run never panics
// and a failed run is a *gen.RunError whose every error has a position.
// The seeds run with go test; to search further:
//
//	go test ./gen -run '^$' -fuzz FuzzGenerate -fuzztime 10m -parallel 1
func FuzzGenerate(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s.kindMarker, s.fieldMarker, s.fieldType)
	}
	f.Fuzz(func(t *testing.T, kindMarker, fieldMarker, fieldType string) {
		for _, s := range []string{kindMarker, fieldMarker, fieldType} {
			if strings.ContainsAny(s, "\n\r`") || strings.Contains(s, "*/") || strings.Contains(s, "//") {
				t.Skip("the input would not stay one line or one field")
			}
		}
		dir := writeFuzzProject(t, fmt.Sprintf(fuzzTypes, "// "+kindMarker, "// "+fieldMarker, fieldType))
		runNoPanic(t, dir)
	})
}

// writeFuzzProject writes a one-package project in a new directory under
// testdata, inside this module so that it loads with its dependencies.
func writeFuzzProject(t *testing.T, types string) string {
	t.Helper()
	dir, err := os.MkdirTemp("testdata", "fuzz-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	api := filepath.Join(dir, "apis", "v1")
	if err := os.MkdirAll(api, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"doc.go":   "// Package v1 is fuzzed.\n//\n// +groupName=fuzz.example.com\npackage v1\n",
		"types.go": types,
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(api, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runNoPanic runs every generator on dir, failing on a panic or on an
// error without a position.
func runNoPanic(t *testing.T, dir string) {
	t.Helper()
	defer func() {
		if v := recover(); v != nil {
			t.Fatalf("opgen panicked: %v\n%s", v, debug.Stack())
		}
	}()
	_, err := gen.Run(context.Background(), gen.Options{Root: dir, DryRun: true, StampDir: "-"}, generators.All())
	if err == nil {
		return
	}
	var runErr *gen.RunError
	if !errors.As(err, &runErr) {
		t.Fatalf("a failed run must return a *gen.RunError, got %T: %v", err, err)
	}
	for _, e := range runErr.Errors {
		if e.Pos.Filename == "" {
			t.Errorf("error without a position: %s", e.Msg)
		}
		if strings.Contains(e.Msg, "a bug of opgen") {
			t.Errorf("a generator panicked: %s", e)
		}
	}
}

// TestUntypedNamedTypeIsReportedAtItsDeclaration: a named map of any
// values was reported by the deepcopy generator without a position.
func TestUntypedNamedTypeIsReportedAtItsDeclaration(t *testing.T) {
	types := strings.Replace(fmt.Sprintf(fuzzTypes, "", "", "Values"), "// WidgetSpec is", "type Values map[string]any\n\n// WidgetSpec is", 1)
	dir := writeFuzzProject(t, types)
	_, err := gen.Run(context.Background(), gen.Options{Root: dir, DryRun: true, StampDir: "-"}, generators.All())
	var runErr *gen.RunError
	if !errors.As(err, &runErr) {
		t.Fatalf("want a *gen.RunError, got %v", err)
	}
	rel := runErr.Relative(mustAbs(t, dir))
	if len(rel.Errors) != 1 || !strings.HasPrefix(rel.Errors[0].Error(), "apis/v1/types.go:26:24: type Values: an untyped value") {
		t.Errorf("want one error at the map's value type, got:\n%v", rel)
	}
}

func mustAbs(t *testing.T, dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
