package model

import (
	"go/ast"
	"strconv"
	"strings"

	"sigs.k8s.io/controller-tools/pkg/loader"
)

// plugPath is the import path of the package of plug.DeleteNow.
const plugPath = "github.com/opgen-sdk/opgen/pkg/plug"

// typeRef names a Go type by its package's import path and its name.
type typeRef struct{ path, name string }

// settleDeletesNow reads, from the code of the controller package, which
// controllers delete children themselves with plug.DeleteNow: RBAC keeps
// delete on their retained kinds, which nothing prunes. A call is the
// controller's whose kind the action argument's declared type names
// (a *plug.Action[*v1.Schedule] parameter of the function that calls it);
// a call whose action opgen cannot tell so counts for every controller.
// Without the controller package among the run's packages, none does.
func (b *apiBuilder) settleDeletesNow(api *API) {
	var pkg *loader.Package
	for _, root := range b.in.Roots {
		if b.isControllerPackage(root) {
			pkg = root
		}
	}
	if pkg == nil {
		return
	}
	kinds, unknown := deleteNowCalls(pkg)
	for _, k := range api.Controllers() {
		k.DeletesNow = unknown || kinds[typeRef{k.Version.ImportPath, k.Name}]
	}
	for _, h := range api.BuiltinControllers {
		h.DeletesNow = unknown || kinds[typeRef{h.Kind.Package, h.Kind.Kind}]
	}
}

// deleteNowCalls returns the kinds of the actions pkg passes to
// plug.DeleteNow, and whether the action of a call could not be told.
func deleteNowCalls(pkg *loader.Package) (kinds map[typeRef]bool, unknown bool) {
	pkg.NeedSyntax()
	kinds = map[typeRef]bool{}
	for _, f := range pkg.Syntax {
		imports := importNames(f)
		plug, ok := reverse(imports)[plugPath]
		if !ok {
			continue
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				findDeleteNow(fd.Body, params(nil, fd.Recv, fd.Type), plug, func(action ast.Expr, ps map[string]ast.Expr) {
					ref, ok := actionKind(action, ps, plug, imports)
					kinds[ref] = kinds[ref] || ok
					unknown = unknown || !ok
				})
			}
		}
	}
	delete(kinds, typeRef{})
	return kinds, unknown
}

// findDeleteNow calls found with the action argument of each call of
// plug.DeleteNow (plug the file's name of the package) in body, and the
// types of the parameters in scope, function literals' included.
func findDeleteNow(body ast.Node, ps map[string]ast.Expr, plug string, found func(ast.Expr, map[string]ast.Expr)) {
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			findDeleteNow(n.Body, params(ps, nil, n.Type), plug, found)
			return false
		case *ast.CallExpr:
			fun := n.Fun
			if ix, ok := fun.(*ast.IndexExpr); ok { // plug.DeleteNow[*v1.Schedule]
				fun = ix.X
			}
			if isSelector(fun, plug, "DeleteNow") && len(n.Args) >= 2 {
				found(n.Args[1], ps)
			}
		}
		return true
	})
}

// actionKind is the kind of the action expression a: a parameter declared
// *plug.Action[*pkg.Kind].
func actionKind(a ast.Expr, ps map[string]ast.Expr, plug string, imports map[string]string) (typeRef, bool) {
	id, ok := a.(*ast.Ident)
	if !ok {
		return typeRef{}, false
	}
	star, ok := ps[id.Name].(*ast.StarExpr)
	if !ok {
		return typeRef{}, false
	}
	ix, ok := star.X.(*ast.IndexExpr)
	if !ok || !isSelector(ix.X, plug, "Action") {
		return typeRef{}, false
	}
	obj, ok := ix.Index.(*ast.StarExpr)
	if !ok {
		return typeRef{}, false
	}
	sel, ok := obj.X.(*ast.SelectorExpr)
	if !ok {
		return typeRef{}, false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok || imports[pkg.Name] == "" {
		return typeRef{}, false
	}
	return typeRef{imports[pkg.Name], sel.Sel.Name}, true
}

// params returns outer with the receiver and parameters of a function
// added, by name.
func params(outer map[string]ast.Expr, recv *ast.FieldList, ft *ast.FuncType) map[string]ast.Expr {
	out := map[string]ast.Expr{}
	for k, v := range outer {
		out[k] = v
	}
	for _, fl := range []*ast.FieldList{recv, ft.Params} {
		if fl == nil {
			continue
		}
		for _, f := range fl.List {
			for _, n := range f.Names {
				out[n.Name] = f.Type
			}
		}
	}
	return out
}

func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == pkg && sel.Sel.Name == name
}

// importNames maps the names a file gives its imports to their paths: the
// alias, else the path's last element (a package named otherwise needs
// an alias to be found).
func importNames(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		out[name] = path
	}
	return out
}

func reverse(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[v] = k
	}
	return out
}
