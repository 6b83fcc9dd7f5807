package scaffold

import (
	"bytes"
	"fmt"
	"go/format"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/opgen-sdk/opgen/gen/model"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/controller"
	"github.com/opgen-sdk/opgen/gen/markers"
)

// APIOptions describe a kind for CreateAPI.
type APIOptions struct {
	// Group is the full API group, such as hello.example.com.
	Group string
	// Version is the API version, such as v1 or v1alpha1.
	Version string
	// Kind is the kind, such as Greeting.
	Kind string
	// ClusterScoped makes the kind cluster-scoped.
	ClusterScoped bool
	// APIDir is where group directories go, relative to the project root.
	// Default: apis.
	APIDir string
	// WithDelete gives the controller stub a Delete method, which makes
	// the runtime keep a finalizer on every object of the kind (see
	// StubOptions).
	WithDelete bool
	// Controller gives a new version of an existing kind a controller of
	// its own, which shares the kind's objects with the controllers of the
	// other versions (see VersionController). A new kind has a controller
	// anyway.
	Controller bool
}

// Created lists the files CreateAPI wrote and what to do next.
type Created struct {
	Files []string
	Notes []string
}

var kindName = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

// CreateAPI writes the types of a new kind, or of a new version of an
// existing kind, into <APIDir>/<group>/<version>/ and the controller stub
// of a new kind into the controller package; with Controller, a new
// version gets a controller stub too (<kind>_<version>.go), and the other
// versions' types that have a controller get the dispatch marker that
// lets the controllers share the kind. It refuses to overwrite anything
// else.
func CreateAPI(p *gen.Project, opts APIOptions) (*Created, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	short := strings.ToLower(strings.SplitN(opts.Group, ".", 2)[0])
	dir := p.Abs(filepath.Join(opts.APIDir, short, opts.Version))
	typesFile := filepath.Join(dir, strings.ToLower(opts.Kind)+"_types.go")
	if _, err := os.Stat(typesFile); err == nil {
		return nil, fmt.Errorf("%s exists: opgen create api never overwrites; pick another kind or version", typesFile)
	}
	others := otherVersions(p.Abs(filepath.Join(opts.APIDir, short)), opts.Version, opts.Kind)
	out := &Created{}
	files := map[string][]byte{}
	if _, err := os.Stat(filepath.Join(dir, "doc.go")); os.IsNotExist(err) {
		files[filepath.Join(dir, "doc.go")] = render(docTemplate, opts)
	}
	types := typesData{APIOptions: opts, Controller: len(others) == 0}
	switch {
	case len(others) > 0 && opts.Controller:
		d, err := addVersionController(p, opts, dir, others, files, out)
		if err != nil {
			return nil, err
		}
		types.Controller, types.Dispatch = true, d
		out.Notes = append(out.Notes, "with several versions, mark the one objects are stored in with // +kubebuilder:storageversion")
	case len(others) > 0:
		out.Notes = append(out.Notes,
			fmt.Sprintf("%s exists in %s: the new version has no +opgen:controller (add --controller to give it one that shares the objects with the other versions' controllers)", opts.Kind, strings.Join(others, ", ")),
			"with two versions, mark the one objects are stored in with // +kubebuilder:storageversion")
	default:
		if err := addStub(p, opts, dir, files, out); err != nil {
			return nil, err
		}
	}
	files[typesFile] = render(typesTemplate, types)
	for _, path := range slices.Sorted(maps.Keys(files)) { // the same list every time
		src := files[path]
		_, err := os.Stat(path)
		existed := err == nil // another version's types, given a dispatch marker (the notes say so)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, src, 0o644); err != nil {
			return nil, err
		}
		if !existed {
			out.Files = append(out.Files, path)
		}
	}
	out.Notes = append(out.Notes, nextNote(stubWritten(p, files)))
	return out, nil
}

// nextNote is the last note of CreateAPI: what go generate does next. It
// speaks of registering a controller only when this call wrote a stub.
func nextNote(stub bool) string {
	note := "run `go generate ./...` to generate the rest (the project needs a //go:generate line running opgen generate; opgen init writes one)"
	if stub {
		note += "; the generated Setup, which main.go runs, then registers the new controller"
	}
	return note
}

// stubWritten reports whether files holds a controller stub: a file of
// the controller package that is not a test.
func stubWritten(p *gen.Project, files map[string][]byte) bool {
	for path := range files {
		if filepath.Dir(path) == p.Abs(p.ControllerDir) && !strings.HasSuffix(path, "_test.go") {
			return true
		}
	}
	return false
}

// addStub adds the controller stub of a new kind to files, unless its
// handler type is declared already.
func addStub(p *gen.Project, opts APIOptions, dir string, files map[string][]byte, out *Created) error {
	v := &model.Version{Group: &model.Group{Name: opts.Group}, Name: opts.Version, ImportPath: p.ImportPath(dir)}
	k := &model.Kind{Version: v, Name: opts.Kind}
	stub := filepath.Join(p.Abs(p.ControllerDir), strings.ToLower(opts.Kind)+".go")
	staged, err := stageStub(p, k, stub, opts, files, out, "move it away or pick another kind")
	if staged {
		addTests(p, k, opts.ClusterScoped, files)
	}
	return err
}

// stageStub adds the controller stub of k to files at path, unless its
// handler type is declared already (a note says so); a file at path is an
// error, whose fix is instead. It reports whether it added the stub.
func stageStub(p *gen.Project, k *model.Kind, path string, opts APIOptions, files map[string][]byte, out *Created, instead string) (bool, error) {
	if declaredTypes(filepath.Dir(path))[controller.HandlerName(k)] {
		out.Notes = append(out.Notes, controller.HandlerName(k)+" exists already; no stub written")
		return false, nil
	}
	if _, err := os.Stat(path); err == nil {
		return false, fmt.Errorf("%s exists: opgen create api never overwrites; %s", path, instead)
	}
	src, err := format.Source(Stub(p, k, StubOptions{WithDelete: opts.WithDelete}))
	if err != nil {
		return false, err
	}
	files[path] = src
	return true, nil
}

func (o *APIOptions) validate() error {
	if o.APIDir == "" {
		o.APIDir = gen.DefaultAPIDir
	}
	switch {
	case !strings.Contains(o.Group, ".") || strings.ToLower(o.Group) != o.Group:
		return fmt.Errorf("--group %q: give the full, lower-case API group, such as hello.example.com", o.Group)
	case !kindName.MatchString(o.Kind):
		return fmt.Errorf("--kind %q: give a capitalized Go identifier, such as Greeting", o.Kind)
	}
	if _, err := markers.ParseKindRef(o.Version + "." + o.Kind); err != nil {
		return fmt.Errorf("--version %q: give a Kubernetes API version, such as v1, v1beta1 or v2alpha1", o.Version)
	}
	return nil
}

// otherVersions returns the versions under groupDir, other than version,
// that declare kind.
func otherVersions(groupDir, version, kind string) []string {
	var out []string
	entries, _ := os.ReadDir(groupDir)
	for _, e := range entries {
		if e.IsDir() && e.Name() != version && declaredTypes(filepath.Join(groupDir, e.Name()))[kind] {
			out = append(out, e.Name())
		}
	}
	return out
}

func render(t *template.Template, data any) []byte {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		panic(err) // the templates are constants
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		panic(err)
	}
	return src
}

var docTemplate = template.Must(template.New("doc").Parse(`// Package {{.Version}} holds version {{.Version}} of the {{.Group}} API.
//
// +groupName={{.Group}}
package {{.Version}}
`))

var typesTemplate = template.Must(template.New("types").Parse(`package {{.Version}}

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/apis"
)

// {{.Kind}}Spec is the desired state of a {{.Kind}}.
type {{.Kind}}Spec struct {
	// Add the fields of the desired state here. Markers such as
	// +kubebuilder:validation:Minimum, +kubebuilder:default and
	// +kubebuilder:validation:XValidation validate and default them in the CRD.
}

// {{.Kind}}Status is the observed state of a {{.Kind}}.
type {{.Kind}}Status struct {
	// Status records the observed generation and the conditions.
	apis.Status ` + "`json:\",inline\"`" + `
}

// {{.Kind}} is ...
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
{{- if .ClusterScoped}}
// +kubebuilder:resource:scope=Cluster
{{- end}}
// +kubebuilder:printcolumn:name=Ready,type=string,JSONPath=` + "`" + `.status.conditions[?(@.type=="Ready")].status` + "`" + `
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=.metadata.creationTimestamp
{{- if .Controller}}
// +opgen:controller
{{- end}}
{{- if .Dispatch}}
// +opgen:controller:dispatch={{.Dispatch}}
{{- end}}
type {{.Kind}} struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `

	Spec   {{.Kind}}Spec   ` + "`json:\"spec,omitempty\"`" + `
	Status {{.Kind}}Status ` + "`json:\"status,omitempty\"`" + `
}

// {{.Kind}}List is a list of {{.Kind}} objects.
//
// +kubebuilder:object:root=true
type {{.Kind}}List struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\"`" + `
	Items           []{{.Kind}} ` + "`json:\"items\"`" + `
}
`))
