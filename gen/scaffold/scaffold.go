// Package scaffold writes the files that become the user's: a controller
// stub per kind marked +opgen:controller (internal/controller/<kind>.go),
// a webhook stub per kind marked +opgen:webhook
// (internal/controller/<kind>_webhook.go),
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

	"github.com/opgen-sdk/opgen/gen/model"

	"github.com/dave/jennifer/jen"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/controller"
)

const (
	plugPkg    = "github.com/opgen-sdk/opgen/pkg/plug"
	runtimePkg = "github.com/opgen-sdk/opgen/pkg/runtime"
)

// Generator writes the missing controller stubs, from the +opgen: markers
// of the API model.
type Generator struct{ gen.NoMarkers }

var _ gen.Generator = Generator{}

// Generate stages a stub for every controller kind whose handler type is
// not declared yet.
func (Generator) Generate(ctx *gen.Context) error {
	dir := ctx.Project.Abs(ctx.Project.ControllerDir)
	declared := declaredTypes(dir)
	for _, k := range ctx.API.Controllers() {
		if declared[controller.HandlerName(k)] {
			continue
		}
		ctx.Output.Scaffold(filepath.Join(dir, StubFile(k)), Stub(ctx.Project, k, StubOptions{}))
	}
	for _, k := range ctx.API.Webhooks() {
		if declared[controller.WebhookName(k)] {
			continue
		}
		ctx.Output.Scaffold(filepath.Join(dir, controller.WebhookFile(k)), WebhookStub(ctx.Project, k))
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

// StubFile is the file name of k's controller stub: <kind>.go, or
// <kind>_<version>.go for the controller of a newer version of a kind with
// controllers in several versions (see controller.GlueName).
func StubFile(k *model.Kind) string {
	if controller.GlueName(k) != k.Name {
		return strings.ToLower(k.Name) + "_" + k.Version.Name + ".go"
	}
	return strings.ToLower(k.Name) + ".go"
}

// StubOptions say which optional handler methods a stub has.
type StubOptions struct {
	// WithDelete adds a Delete method (plug.Deleter). Its presence alone
	// makes the runtime keep a finalizer on every object of the kind, so a
	// stub has it only when asked (opgen create api --with-delete).
	WithDelete bool
}

// Stub returns the controller stub of k: a handler type with Reconcile,
// and Delete when opts ask for it.
func Stub(p *gen.Project, k *model.Kind, opts StubOptions) []byte {
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
		"and typed cache readers (New"+controller.GlueName(k)+"Readers(op), generated for the kinds its",
		"reads and owns markers name).",
	)
	f.Func().Id(controller.ConstructorName(k)).Params(jen.Id("op").Op("*").Qual(runtimePkg, "Operator")).Op("*").Id(h).Block(
		jen.Return(jen.Op("&").Id(h).Values()),
	)
	params := jen.Params(
		jen.Id("ctx").Qual("context", "Context"),
		jen.Id("a").Op("*").Qual(plugPkg, "Action").Types(jen.Op("*").Qual(k.Version.ImportPath, k.Name)),
	).Error()
	methods := []stubMethod{reconcileStub(n, h, filepath.ToSlash(p.ClientDir))}
	if opts.WithDelete {
		methods = append(methods, deleteStub(n))
	}
	for _, m := range methods {
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

// reconcileStub is the Reconcile method of a stub for kind n, with the
// doc comment that says when it runs.
func reconcileStub(n, handler, clientDir string) stubMethod {
	return stubMethod{
		name: "Reconcile",
		doc: []string{
			"Reconcile runs for every verb but Delete, and a.Verb says why: plug.Add the",
			"first time the controller sees a " + n + " (including one that existed before the",
			"operator started), plug.Modify when its spec (metadata.generation) changed",
			"since it was last handled, and plug.Reconcile when nothing changed: on the",
			"period that +opgen:controller:reconcileEvery sets, after a.RequeueAfter, when",
			"an owned object changed, and when the operator starts. To act differently on",
			"Add or Modify, give " + handler + " an Add or Modify method of the same",
			"signature (plug.Adder, plug.Modifier).",
			"",
			"Declare every object the " + n + " owns with a.Own, as server-side apply",
			"configurations (client-go's applyconfigurations packages, or this project's",
			"under " + clientDir + "/applyconfiguration): owned objects it does not declare",
			"are pruned. Report progress in a.Object.Status; the pipeline writes it.",
		},
		body: []jen.Code{
			jen.Comment("Declare the objects this " + n + " should own with a.Own(...) and set"),
			jen.Comment("a.Object.Status."),
			jen.Return(jen.Nil()),
		},
	}
}

// deleteStub is the Delete method of a stub for kind n.
func deleteStub(n string) stubMethod {
	return stubMethod{
		name: "Delete",
		doc: []string{
			"Delete runs when a " + n + " is being deleted. Because this method exists, the",
			"runtime keeps a finalizer on every " + n + ": Delete runs even when the operator",
			"was down during the deletion, and the " + n + " goes away only once Delete",
			"returned nil. Owned objects need no cleanup here, the garbage collector",
			"deletes them; when that is all there is to do, remove this method and the",
			"runtime adds no finalizer.",
		},
		body: []jen.Code{
			jen.Comment("Clean up what the " + n + " made outside the cluster."),
			jen.Return(jen.Nil()),
		},
	}
}
