package scaffold

import (
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/opgen-sdk/opgen/gen/model"

	"github.com/gobuffalo/flect"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/controller"
)

// addTests adds to files, once, the controller package's TestMain
// (main_test.go, which runs the operator with pkg/optest) and a test of the
// new kind (<kind>_test.go) that passes untouched and shows the pattern:
// create an object, wait until the controller handled it, delete it.
func addTests(p *gen.Project, k *model.Kind, clusterScoped bool, files map[string][]byte) {
	dir := p.Abs(p.ControllerDir)
	if k.Plural == "" {
		kk := *k
		kk.Plural = strings.ToLower(flect.Pluralize(k.Name))
		k = &kk
	}
	configDir, err := filepath.Rel(dir, filepath.Dir(p.Abs(p.CRDDir)))
	if err != nil {
		configDir = filepath.Dir(p.Abs(p.CRDDir))
	}
	data := testData{
		Name:          p.Name,
		Package:       controller.PackageName(p),
		ControllerPkg: p.ImportPath(dir),
		ConfigDir:     filepath.ToSlash(configDir),
		APIPkg:        k.Version.ImportPath,
		APIAlias:      k.Version.Alias(),
		ClientsetPkg:  p.ImportPath(p.Abs(p.ClientDir)) + "/clientset/versioned",
		ClientGroup:   k.Version.ClientGroup(),
		Group:         k.Version.Group.Name,
		Version:       k.Version.Name,
		Kind:          k.Name,
		GoPlural:      k.GoPlural(),
		ClusterScoped: clusterScoped,
	}
	main := filepath.Join(dir, "main_test.go")
	if _, err := os.Stat(main); os.IsNotExist(err) {
		files[main] = render(testMainTemplate, data)
	}
	kindTest := filepath.Join(dir, strings.ToLower(k.Name)+"_test.go")
	if _, err := os.Stat(kindTest); os.IsNotExist(err) {
		files[kindTest] = render(kindTestTemplate, data)
	}
}

type testData struct {
	Name, Package, ControllerPkg, ConfigDir string
	APIPkg, APIAlias, ClientsetPkg          string
	ClientGroup, Group, Version, Kind       string
	GoPlural                                string
	ClusterScoped                           bool
}

var testMainTemplate = template.Must(template.New("main_test").Parse(`package {{.Package}}_test

import (
	"testing"

	"github.com/opgen-sdk/opgen/pkg/optest"

	"{{.ControllerPkg}}"
)

// kit runs this package's tests against a Kubernetes API server: the local
// control plane (or, with OPTEST_USE_EXISTING_CLUSTER=true, the cluster
// KUBECONFIG names). It installs the generated CRDs and RBAC and runs the
// operator in-process as its generated ServiceAccount, so a permission the
// markers do not grant fails a test.
//
// opgen create api wrote this file once; it is yours.
var kit = optest.New(optest.Options{
	Name:      "{{.Name}}",
	ConfigDir: "{{.ConfigDir}}",
	Setup:     {{.Package}}.Setup,
})

func TestMain(m *testing.M) { kit.Main(m) }
`))

var kindTestTemplate = template.Must(template.New("kind_test").Parse(`package {{.Package}}_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/optest"

	{{.APIAlias}} "{{.APIPkg}}"
	"{{.ClientsetPkg}}"
)

// Test{{.Kind}}IsHandled creates a {{.Kind}}, waits until the controller has
// handled it and deletes it. Extend it as {{.Kind}}Controller grows: wait
// for what it owns with optest.WaitForOwned, for a condition with
// optest.WaitForCondition.
//
// opgen create api wrote this file. Until you edit it, go generate
// writes it again when a marker renames the resource, so that the
// client call below stays right; then it is yours.
func Test{{.Kind}}IsHandled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := versioned.NewForConfigOrDie(kit.Config).{{.ClientGroup}}().{{.GoPlural}}({{if not .ClusterScoped}}kit.Namespace(t){{end}})
	// The object is a sample built from the CRD as the test runs: its
	// required fields and defaults, so the test keeps passing as required
	// fields are added. Set here the fields a pattern or a CEL rule
	// constrains, which the sample does not solve.
	obj := &{{.APIAlias}}.{{.Kind}}{}
	kit.Sample(t, schema.GroupVersionKind{Group: "{{.Group}}", Version: "{{.Version}}", Kind: "{{.Kind}}"}, obj)
	obj.ObjectMeta = metav1.ObjectMeta{GenerateName: "example-"}
	created, err := client.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create a {{.Kind}}: %v", err)
	}
	name := created.Name

	get := func(ctx context.Context) (*{{.APIAlias}}.{{.Kind}}, error) {
		return client.Get(ctx, name, metav1.GetOptions{})
	}
	optest.WaitFor(t, "the {{.Kind}} handled by its controller", get, func(obj *{{.APIAlias}}.{{.Kind}}) bool {
		// A status with an observedGeneration says which generation the
		// controller handled. Without one, wait here for what the
		// controller does.
		observed, ok := any(obj).(apis.ObservedGenerationObject)
		return !ok || observed.GetObservedGeneration() == obj.Generation
	})

	if err := client.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete the {{.Kind}}: %v", err)
	}
	optest.WaitForDeletion(t, "the {{.Kind}}", get)
}
`))
