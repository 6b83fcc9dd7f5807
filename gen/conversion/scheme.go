package conversion

import (
	"go/ast"
	"strconv"
	"strings"

	"github.com/opgen-sdk/opgen/gen/model"
)

// crScheme is controller-runtime's package of the scheme.Builder that
// kubebuilder's groupversion_info.go declares SchemeBuilder with.
const crScheme = "sigs.k8s.io/controller-runtime/pkg/scheme"

// localSchemeBuilder returns the declaration conversion-gen's output
// needs and the spoke lacks: its init registers RegisterConversions with
// localSchemeBuilder, a *runtime.SchemeBuilder. A package registered the
// code-generator way declares it already; opgen's registration and
// kubebuilder's do not. kubebuilder's SchemeBuilder is a
// controller-runtime scheme.Builder, whose Register takes objects, not
// functions: its embedded runtime.SchemeBuilder takes them.
func localSchemeBuilder(v *model.Version) []byte {
	if declared(v, "localSchemeBuilder") != nil {
		return nil
	}
	target := "&SchemeBuilder"
	if spec := declared(v, "SchemeBuilder"); spec != nil && isControllerRuntimeBuilder(v, spec) {
		target = "&SchemeBuilder.SchemeBuilder"
	}
	return []byte("\n// localSchemeBuilder is the scheme builder conversion-gen registers\n// RegisterConversions with.\nvar localSchemeBuilder = " + target + "\n")
}

// declared returns the package-level var spec of v's own files (not the
// generated ones, which the load leaves out) that declares name, or nil.
func declared(v *model.Version, name string) *declaredVar {
	for _, f := range v.Package.Syntax {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				vs, ok := spec.(*ast.ValueSpec)
				if !ok {
					continue
				}
				for i, n := range vs.Names {
					if n.Name == name {
						return &declaredVar{file: f, spec: vs, index: i}
					}
				}
			}
		}
	}
	return nil
}

// declaredVar is one name of a var declaration, in its file.
type declaredVar struct {
	file  *ast.File
	spec  *ast.ValueSpec
	index int
}

// isControllerRuntimeBuilder reports whether the var is a
// controller-runtime scheme.Builder or a pointer to one: by its declared
// type, or by its value (&scheme.Builder{...}).
func isControllerRuntimeBuilder(v *model.Version, d *declaredVar) bool {
	t := d.spec.Type
	if t == nil && d.index < len(d.spec.Values) {
		t = d.spec.Values[d.index]
		if u, ok := t.(*ast.UnaryExpr); ok {
			t = u.X
		}
		if lit, ok := t.(*ast.CompositeLit); ok {
			t = lit.Type
		}
	}
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	sel, ok := t.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Builder" {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && importPath(d.file, pkg.Name) == crScheme
}

// importPath returns the path of the import named name in f, or "".
func importPath(f *ast.File, name string) string {
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		local := ""
		if imp.Name != nil {
			local = imp.Name.Name
		} else {
			local = path[strings.LastIndex(path, "/")+1:]
		}
		if local == name {
			return path
		}
	}
	return ""
}
