// Package scaffold writes the files that become the user's: a controller
// stub per kind marked +opgen:controller (internal/controller/<kind>.go),
// and, for `opgen create api`, the types of a new kind.
//
// A scaffold is written only when missing and never overwritten: the stub
// of a kind is skipped as soon as any file of the controller package
// declares its handler type, wherever the user moved it.
package scaffold

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"

	"github.com/dave/jennifer/jen"
	"sigs.k8s.io/controller-tools/pkg/markers"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/controller"
)

const (
	plugPkg    = "github.com/opgen-sdk/opgen/pkg/plug"
	runtimePkg = "github.com/opgen-sdk/opgen/pkg/runtime"
)

// Generator writes the missing controller stubs.
type Generator struct{}

var _ gen.Generator = Generator{}

// RegisterMarkers registers nothing more: the runner registers the
// +opgen: markers for the API model.
func (Generator) RegisterMarkers(*markers.Registry) error { return nil }

// Generate stages a stub for every controller kind whose handler type is
// not declared yet.
func (Generator) Generate(ctx *gen.Context) error {
	dir := ctx.Project.Abs(ctx.Project.ControllerDir)
	declared := declaredTypes(dir)
	for _, k := range ctx.API.Controllers() {
		if declared[controller.HandlerName(k)] {
			continue
		}
		ctx.Output.Scaffold(filepath.Join(dir, strings.ToLower(k.Name)+".go"), Stub(ctx.Project, k))
	}
	return nil
}

// declaredTypes returns the names of the types declared in the Go files of
// dir, generated ones excepted.
func declaredTypes(dir string) map[string]bool {
	out := map[string]bool{}
	entries, _ := os.ReadDir(dir)
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") || e.Name() == controller.FileName {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			continue // the compiler will say what is wrong with it
		}
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				for _, s := range gd.Specs {
					out[s.(*ast.TypeSpec).Name.Name] = true
				}
			}
		}
	}
	return out
}

// Stub returns the controller stub of k.
func Stub(p *gen.Project, k *gen.Kind) []byte {
	f := jen.NewFilePathName(p.ImportPath(p.ControllerDir), controller.PackageName(p))
	f.ImportAlias(k.Version.ImportPath, k.Version.Alias())
	h, n := controller.HandlerName(k), k.Name
	comment(f,
		h+" handles "+n+" objects ("+k.Version.GroupVersion().String()+").",
		"",
		"opgen wrote this file once and never overwrites it: it is yours. The",
		"generated glue (zz_generated.controllers.go) runs these methods through the",
		"runtime; the generated Setup registers the handler that",
		controller.ConstructorName(k)+" returns.",
	)
	f.Type().Id(h).Struct()
	f.Line()
	comment(f,
		controller.ConstructorName(k)+" returns the handler of "+n+" that the generated Setup",
		"registers. Give it what it needs here, from op: clients (op.Clientset()),",
		"and typed cache readers (New"+n+"Readers(op), generated for the kinds its",
		"reads and owns markers name).",
	)
	f.Func().Id(controller.ConstructorName(k)).Params(jen.Id("op").Op("*").Qual(runtimePkg, "Operator")).Op("*").Id(h).Block(
		jen.Return(jen.Op("&").Id(h).Values()),
	)
	params := jen.Params(
		jen.Id("ctx").Qual("context", "Context"),
		jen.Id("a").Op("*").Qual(plugPkg, "Action").Types(jen.Op("*").Qual(k.Version.ImportPath, k.Name)),
	).Error()
	for _, m := range stubMethods(n, filepath.ToSlash(p.ClientDir)) {
		f.Line()
		comment(f, m.doc...)
		f.Func().Params(jen.Id("c").Op("*").Id(h)).Id(m.name).Add(params.Clone()).Block(m.body...)
	}
	return []byte(f.GoString())
}

func comment(f *jen.File, lines ...string) {
	for _, l := range lines {
		f.Comment(l)
	}
}

type stubMethod struct {
	name string
	doc  []string
	body []jen.Code
}

// stubMethods are the handler methods of a stub for kind n, with the doc
// comments that say when each runs.
func stubMethods(n, clientDir string) []stubMethod {
	reconcile := []jen.Code{jen.Return(jen.Id("c").Dot("Reconcile").Call(jen.Id("ctx"), jen.Id("a")))}
	return []stubMethod{{
		name: "Add",
		doc: []string{
			"Add runs the first time the controller sees a " + n + ", including one that",
			"existed before the operator started and was never handled.",
			"",
			"Declare every object the " + n + " owns with a.Own, as server-side apply",
			"configurations (client-go's applyconfigurations packages, or this project's",
			"under " + clientDir + "/applyconfiguration): owned objects that an Add, Modify or",
			"Reconcile does not declare are pruned. Report progress in a.Object.Status;",
			"the pipeline writes it.",
		},
		body: reconcile,
	}, {
		name: "Modify",
		doc: []string{
			"Modify runs when the " + n + "'s spec (its metadata.generation) changed since it",
			"was last handled successfully. Like Add, it declares the full set of owned",
			"objects.",
		},
		body: reconcile,
	}, {
		name: "Reconcile",
		doc: []string{
			"Reconcile runs when nothing the controller handled changed: on the period",
			"that +opgen:controller:reconcileEvery sets, after a.RequeueAfter, when an",
			"owned object changed, and for every " + n + " when the operator starts. It",
			"declares the full set of owned objects too; Add and Modify call it, so the",
			"desired state is written in one place.",
		},
		body: []jen.Code{
			jen.Comment("Declare the objects this " + n + " should own with a.Own(...) and set"),
			jen.Comment("a.Object.Status."),
			jen.Return(jen.Nil()),
		},
	}, {
		name: "Delete",
		doc: []string{
			"Delete runs when a " + n + " is being deleted. Because this method exists, the",
			"runtime keeps a finalizer on every " + n + ": Delete runs even when the operator",
			"was down during the deletion, and the " + n + " goes away only once Delete",
			"returned nil. Owned objects need no cleanup here, the garbage collector",
			"deletes them; when that is all there is to do, remove this method and the",
			"runtime adds no finalizer.",
		},
		body: []jen.Code{jen.Return(jen.Nil())},
	}}
}
