package rbac

import (
	"go/ast"
	"path/filepath"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/controller"
	"github.com/opgen-sdk/opgen/gen/model"
)

// handlerDeletes says whether the handler of a custom kind may have
// Delete, for which the runtime keeps a finalizer on the kind's objects
// (patch), as the controller package declares it: the handler type
// (<Kind>Controller) has a Delete method, or embeds a type whose methods
// could hold one. A handler the package does not declare yet is the stub
// this run writes, which has none; a controller package that is not among
// the run's packages may have it.
func handlerDeletes(ctx *gen.Context) func(*model.Kind) bool {
	files := controllerFiles(ctx)
	return func(k *model.Kind) bool {
		if files == nil {
			return true
		}
		name := controller.HandlerName(k)
		declared, embeds := false, false
		for _, f := range files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Name.Name == "Delete" && d.Recv != nil && model.ReceiverName(d) == name {
						return true
					}
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						if ts, ok := spec.(*ast.TypeSpec); ok && ts.Name.Name == name {
							declared = true
							embeds = embeds || mayEmbed(ts)
						}
					}
				}
			}
		}
		return declared && embeds
	}
}

// mayEmbed reports whether the methods of the type ts declares may come
// from another type: it embeds one, or is an alias or a defined type of
// another.
func mayEmbed(ts *ast.TypeSpec) bool {
	st, ok := ts.Type.(*ast.StructType)
	if !ok || ts.Assign.IsValid() {
		return true
	}
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 {
			return true
		}
	}
	return false
}

// controllerFiles are the parsed files of the controller package, or nil
// when it is not among the run's packages.
func controllerFiles(ctx *gen.Context) []*ast.File {
	dir := ctx.Project.Abs(ctx.Project.ControllerDir)
	for _, pkg := range ctx.Roots {
		if len(pkg.GoFiles) > 0 && filepath.Dir(pkg.GoFiles[0]) == dir {
			pkg.NeedSyntax()
			return pkg.Syntax
		}
	}
	return nil
}
