package gen

import (
	"go/ast"

	"sigs.k8s.io/controller-tools/pkg/loader"

	"github.com/opgen-sdk/opgen/gen/markers"
)

// checkKubebuilderMarkers reports the +kubebuilder: markers of pkg that
// controller-tools does not know, or whose arguments do not parse, and
// +opgen:controller:owns lists separated by commas, at their positions.
// It runs before the collector's errors are added, so that its message,
// with the fix, replaces the collector's about the same line.
func (b *apiBuilder) checkKubebuilderMarkers(pkg *loader.Package) {
	pkg.NeedSyntax()
	for _, file := range pkg.Syntax {
		for _, group := range file.Comments {
			for _, c := range group.List {
				text, ok := markerText(c.Text)
				if !ok {
					continue
				}
				msg := markers.CheckKubebuilder(text, b.ctx.Collector.Registry)
				if msg == "" {
					msg = markers.CheckOwnsList(text)
				}
				if msg != "" {
					b.ctx.Errors.Add(b.ctx.Position(c.Pos()), "%s", msg)
				}
			}
		}
	}
}

// checkFieldTypes reports the fields of pkg's types that cannot be part of
// a Kubernetes API, at the field, before any generator meets them with a
// less helpful message: channels, functions, untyped interfaces and, unless
// the run allows them, floats.
func (b *apiBuilder) checkFieldTypes(pkg *loader.Package) {
	for _, file := range pkg.Syntax {
		for _, ts := range TypeSpecs(file) {
			switch t := ts.Type.(type) {
			case *ast.StructType:
				b.checkStruct(ts.Name.Name, t)
			case *ast.InterfaceType:
				// An interface type is not data; the deepcopy generator
				// skips it.
			default:
				b.checkNamedType(ts)
			}
		}
	}
}

func (b *apiBuilder) checkStruct(typeName string, st *ast.StructType) {
	for _, f := range st.Fields.List {
		name := typeName
		if len(f.Names) > 0 {
			name += "." + f.Names[0].Name
		}
		ast.Inspect(f.Type, func(n ast.Node) bool {
			if msg := badFieldType(n, b.ctx.Project.AllowDangerousTypes); msg != "" {
				b.ctx.Errors.Add(b.ctx.Position(n.Pos()), "field %s: %s", name, msg)
				return false
			}
			return true
		})
	}
}

// checkNamedType reports what cannot be serialized in a named type that is
// not a struct (type Values map[string]any). Its floats are left to the
// CRD generator, which reports them only where a field uses the type.
func (b *apiBuilder) checkNamedType(ts *ast.TypeSpec) {
	ast.Inspect(ts.Type, func(n ast.Node) bool {
		if msg := badFieldType(n, true); msg != "" {
			b.ctx.Errors.Add(b.ctx.Position(n.Pos()), "type %s: %s", ts.Name.Name, msg)
			return false
		}
		return true
	})
}

// badFieldType says what is wrong with a type expression inside a field's
// type, or "".
func badFieldType(n ast.Node, allowFloats bool) string {
	switch t := n.(type) {
	case *ast.ChanType:
		return "a channel cannot be serialized, so it cannot be part of an API type; keep it in the controller, outside the API types"
	case *ast.FuncType:
		return "a function cannot be serialized, so it cannot be part of an API type; keep it in the controller, outside the API types"
	case *ast.InterfaceType:
		return untyped
	case *ast.Ident:
		switch t.Name {
		case "any":
			return untyped
		case "error":
			return "an error value has no fields to serialize, so it cannot be part of an API type; keep its message in a string field, or report it as a condition (metav1.Condition)"
		case "float32", "float64":
			if !allowFloats {
				return "floats are refused because clients in other languages round them differently; use resource.Quantity, an integer in a smaller unit or a string, or, to keep the float, run opgen generate with --allow-dangerous-types"
			}
		}
	case *ast.StructType:
		return "" // anonymous struct fields are checked through Inspect
	}
	return ""
}

const untyped = "an untyped value (interface{} or any) has no schema; use apiextensionsv1.JSON (k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1) for free-form JSON, or a typed struct or map"
