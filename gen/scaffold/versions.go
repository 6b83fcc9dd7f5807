package scaffold

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/opgen-sdk/opgen/gen/model"

	"k8s.io/apimachinery/pkg/version"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/controller"
	"github.com/opgen-sdk/opgen/gen/markers"
)

// typesData is what the types template needs.
type typesData struct {
	APIOptions
	Controller bool
	// Dispatch is the +opgen:controller:dispatch of a kind with
	// controllers in several versions, or "".
	Dispatch string
}

// kindDecl is where a version's package declares the kind, and what the
// kind's doc comment says about its controller.
type kindDecl struct {
	version    string
	file       string
	controller bool   // some +opgen:controller marker
	dispatch   string // its +opgen:controller:dispatch value
	// lastMarker is the 1-based line of the last +opgen:controller
	// marker of the doc comment, where a dispatch marker goes after.
	lastMarker int
}

// addVersionController plans the controller of a new version of a kind
// that exists in others: when none of them has a controller, the new
// version's is the kind's only one; otherwise it shares the objects with
// theirs, by the dispatch rule they carry, or by dispatch=written, which
// it adds to each of them. It returns the new version's dispatch ("" when
// it has the only controller).
func addVersionController(p *gen.Project, opts APIOptions, dir string, others []string, files map[string][]byte, out *Created) (string, error) {
	groupDir := filepath.Dir(dir)
	var ctrls []kindDecl
	for _, o := range others {
		d, err := findKind(filepath.Join(groupDir, o), o, opts.Kind)
		if err != nil {
			return "", err
		}
		if d.controller {
			ctrls = append(ctrls, d)
		}
	}
	if len(ctrls) == 0 {
		return "", addStub(p, opts, dir, files, out)
	}
	for _, c := range ctrls {
		if version.CompareKubeAwareVersionStrings(opts.Version, c.version) < 0 {
			return "", fmt.Errorf("--version %s --controller: %s %s has a controller and is newer than %s; the oldest version's controller keeps the name %sController, so a controller for an older version would rename the existing one: add +opgen:controller and +opgen:controller:dispatch to %s by hand and rename the handlers (see go doc github.com/opgen-sdk/opgen/gen/controller)", opts.Version, opts.Kind, c.version, opts.Version, opts.Kind, opts.Version)
		}
	}
	dispatch := markers.DispatchWritten
	for _, c := range ctrls {
		if c.dispatch != "" {
			dispatch = c.dispatch
			break
		}
	}
	for _, c := range ctrls {
		if c.dispatch != "" {
			continue
		}
		if err := addDispatchMarker(c, dispatch, files); err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(p.Root, c.file)
		out.Notes = append(out.Notes, fmt.Sprintf("added +opgen:controller:dispatch=%s to %s (%s %s): each %s goes to the controller of the version it was last written in; write dispatch=<version> on every version instead to send all to one", dispatch, rel, opts.Kind, c.version, opts.Kind))
	}
	return dispatch, addVersionStub(p, opts, dir, ctrls, files, out)
}

// addVersionStub adds the stub of the new version's controller, named
// after its version, to files.
func addVersionStub(p *gen.Project, opts APIOptions, dir string, ctrls []kindDecl, files map[string][]byte, out *Created) error {
	g := &model.Group{Name: opts.Group}
	newKind := func(name, importPath string) *model.Kind {
		v := &model.Version{Group: g, Name: name, ImportPath: importPath}
		k := &model.Kind{Version: v, Name: opts.Kind, Controller: &markers.ControllerSpec{}}
		v.Kinds = []*model.Kind{k}
		g.Versions = append(g.Versions, v)
		return k
	}
	for _, c := range ctrls {
		newKind(c.version, "")
	}
	k := newKind(opts.Version, p.ImportPath(dir))
	stub := filepath.Join(p.Abs(p.ControllerDir), StubFile(k))
	if staged, err := stageStub(p, k, stub, opts, files, out, "move it away"); !staged {
		return err
	}
	out.Notes = append(out.Notes, fmt.Sprintf("%s handles the %s objects the dispatch rule sends to %s; the generated Setup registers it beside %sController", controller.HandlerName(k), opts.Kind, opts.Version, opts.Kind))
	return nil
}

// findKind returns the declaration of kind in the package in dir.
func findKind(dir, version, kind string) (kindDecl, error) {
	fset := token.NewFileSet()
	names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	sort.Strings(names)
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") || strings.HasPrefix(filepath.Base(name), "zz_generated") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return kindDecl{}, fmt.Errorf("read %s: %w", name, err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				if ts := s.(*ast.TypeSpec); ts.Name.Name == kind {
					return kindDeclOf(fset, name, version, docOf(gd, ts)), nil
				}
			}
		}
	}
	return kindDecl{}, fmt.Errorf("no type %s in %s", kind, dir)
}

func docOf(gd *ast.GenDecl, ts *ast.TypeSpec) *ast.CommentGroup {
	if ts.Doc != nil {
		return ts.Doc
	}
	return gd.Doc
}

func kindDeclOf(fset *token.FileSet, file, version string, doc *ast.CommentGroup) kindDecl {
	d := kindDecl{version: version, file: file}
	if doc == nil {
		return d
	}
	for _, c := range doc.List {
		text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
		if !strings.HasPrefix(text, "+opgen:controller") {
			continue
		}
		d.controller, d.lastMarker = true, fset.Position(c.Pos()).Line
		if v, ok := strings.CutPrefix(text, "+opgen:controller:dispatch="); ok {
			d.dispatch = strings.TrimSpace(v)
		}
	}
	return d
}

// addDispatchMarker puts the file of d, with the dispatch marker after its
// last +opgen:controller marker, into files.
func addDispatchMarker(d kindDecl, dispatch string, files map[string][]byte) error {
	src, err := os.ReadFile(d.file)
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(src), "\n")
	if d.lastMarker < 1 || d.lastMarker > len(lines) {
		return fmt.Errorf("%s changed while it was read", d.file)
	}
	marker := lines[d.lastMarker-1]
	indent := marker[:strings.Index(marker, "//")]
	added := indent + "// +opgen:controller:dispatch=" + dispatch + "\n"
	out := strings.Join(lines[:d.lastMarker], "") + added + strings.Join(lines[d.lastMarker:], "")
	files[d.file] = []byte(out)
	return nil
}
