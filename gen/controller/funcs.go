package controller

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/opgen-sdk/opgen/gen/model"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/markers"
)

// ConstructorName is the function the generated Setup calls to build the
// handler of kind: New<Kind>Controller.
func ConstructorName(k *model.Kind) string { return "New" + HandlerName(k) }

// funcDecl is a top-level function of the controller package.
type funcDecl struct {
	decl *ast.FuncDecl
	file *ast.File
}

// userFiles returns the parsed files of the controller package, but the
// glue.
func userFiles(ctx *gen.Context) []*ast.File {
	var out []*ast.File
	dir := ctx.Project.Abs(ctx.Project.ControllerDir)
	for _, pkg := range ctx.Roots {
		if len(pkg.GoFiles) == 0 || filepath.Dir(pkg.GoFiles[0]) != dir {
			continue
		}
		pkg.NeedSyntax()
		for _, f := range pkg.Syntax {
			if filepath.Base(ctx.Fset.Position(f.Pos()).Filename) != FileName {
				out = append(out, f)
			}
		}
	}
	return out
}

// packageDecls returns the top-level functions (not methods) that the
// controller package declares by name, outside the glue, and the names of
// its types. It reads the syntax only: the package may not compile before
// its glue is written.
func packageDecls(ctx *gen.Context) (map[string]funcDecl, map[string]bool) {
	out, types := map[string]funcDecl{}, map[string]bool{}
	for _, f := range userFiles(ctx) {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					out[d.Name.Name] = funcDecl{decl: d, file: f}
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						types[ts.Name.Name] = true
					}
				}
			}
		}
	}
	return out, types
}

// isConstructor reports whether fn reads func(op *runtime.Operator) *handler,
// the signature the generated Setup calls.
func isConstructor(fn funcDecl, handler string) bool {
	t := fn.decl.Type
	if t.TypeParams != nil || t.Params == nil || len(t.Params.List) != 1 || len(t.Params.List[0].Names) > 1 ||
		t.Results == nil || len(t.Results.List) != 1 || len(t.Results.List[0].Names) > 1 {
		return false
	}
	return isQualifiedPointer(fn.file, t.Params.List[0].Type, runtimePkg, "Operator") &&
		isLocalPointer(t.Results.List[0].Type, handler)
}

// isMapFunc reports whether fn has one parameter and one result, the shape
// of runtime.Watch's Map; the compiler checks the types in the glue.
func isMapFunc(fn funcDecl) bool {
	t := fn.decl.Type
	return t.TypeParams == nil && t.Params != nil && t.Params.NumFields() == 1 && t.Results != nil && t.Results.NumFields() == 1
}

func isLocalPointer(e ast.Expr, name string) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := star.X.(*ast.Ident)
	return ok && id.Name == name
}

// isQualifiedPointer reports whether e is *<pkg>.<name> in file f, whatever
// name f imports pkg under.
func isQualifiedPointer(f *ast.File, e ast.Expr, pkg, name string) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && importName(f, pkg) == x.Name
}

// importName is the name file f gives the import of path, or "".
func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p != path {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return filepath.Base(path)
	}
	return ""
}

// checkFuncs reports what the glue would call but the controller package
// does not declare: the constructor of every kind's handler and the
// mapping function of every watch; and a reads marker naming a kind that
// has no reader. A kind whose handler type is not declared yet is left to
// the stub generator, which writes the type with its constructor. It returns the handler types of built-in kinds that have
// a constructor New<Type>, and false when it reported an error.
func checkFuncs(ctx *gen.Context, kinds []*model.Kind, handlers []*model.BuiltinController) (map[string]bool, bool) {
	before := ctx.Errors.Len()
	dir := ctx.Project.ControllerDir
	funcs, types := packageDecls(ctx)
	for _, k := range kinds {
		name, h := ConstructorName(k), HandlerName(k)
		want := "func " + name + "(op *runtime.Operator) *" + h
		fn, ok := funcs[name]
		switch {
		case !ok && !types[h]:
			// The stub generator writes the type and its constructor in
			// this run.
		case !ok:
			ctx.Errors.Add(k.Pos, "%s has +opgen:controller, and the generated Setup builds its handler with %s, which the controller package (%s) does not declare: write %s (import github.com/opgen-sdk/opgen/pkg/runtime), returning the handler with what it needs; opgen create api scaffolds it", k.Name, name, dir, want)
		case !isConstructor(fn, h):
			ctx.Errors.Add(ctx.Position(fn.decl.Name.Pos()), "the generated Setup calls %s(op) to build the handler of %s: give it the signature %s", name, k.Name, want)
		}
		checkSpec(ctx, k.Pos, k.Name, k.Controller, funcs)
	}
	ctors := map[string]bool{}
	for _, h := range handlers {
		name := "New" + h.Name
		if fn, ok := funcs[name]; ok {
			if !isConstructor(fn, h.Name) {
				ctx.Errors.Add(ctx.Position(fn.decl.Name.Pos()), "the generated Setup calls %s(op) to build the handler %s: give it the signature func %s(op *runtime.Operator) *%s, or rename it", name, h.Name, name, h.Name)
			}
			ctors[h.Name] = true
		}
		checkSpec(ctx, h.Pos, h.Name, h.Controller, funcs)
	}
	return ctors, ctx.Errors.Len() == before
}

// checkSpec checks the reads and watches markers of the controller named
// name, declared at pos.
func checkSpec(ctx *gen.Context, pos token.Position, name string, spec *markers.ControllerSpec, funcs map[string]funcDecl) {
	for _, gvk := range spec.Reads {
		if _, ok := builtinKind(gvk); !ok {
			ctx.Errors.Add(markerPos(ctx, pos, "+opgen:controller:reads=", markers.FormatKindRef(gvk)), "%s: +opgen:controller:reads=%s: opgen makes readers of the Kubernetes built-in kinds package builtin has only (go doc github.com/opgen-sdk/opgen/pkg/runtime/builtin); read other kinds with the generated listers of their clientset", name, markers.FormatKindRef(gvk))
		}
	}
	for _, w := range spec.Watches {
		fn, ok := funcs[w.Map]
		switch {
		case !ok:
			ctx.Errors.Add(markerPos(ctx, pos, "+opgen:controller:watches=", "map="+w.Map), "%s: +opgen:controller:watches=%s,map=%s: the controller package (%s) declares no function %s: write func %s(obj metav1.Object) []cache.ObjectName, returning the keys of the %s objects to reconcile", name, markers.FormatKindRef(w.Kind), w.Map, ctx.Project.ControllerDir, w.Map, w.Map, name)
		case !isMapFunc(fn):
			ctx.Errors.Add(ctx.Position(fn.decl.Name.Pos()), "%s maps the watched %s to %s objects (+opgen:controller:watches): give it the signature func %s(obj metav1.Object) []cache.ObjectName", w.Map, markers.FormatKindRef(w.Kind), name, w.Map)
		}
	}
}

// markerPos returns the position of the marker line of the doc comment
// above the declaration at decl that starts with prefix and holds text, or
// decl when there is none.
func markerPos(ctx *gen.Context, decl token.Position, prefix, text string) token.Position {
	pos, _ := ctx.DocMarker(decl, func(m string) bool { return strings.HasPrefix(m, prefix) && strings.Contains(m, text) })
	return pos
}
