package gen

import (
	"fmt"
	"go/ast"
	"reflect"
	"strconv"

	"sigs.k8s.io/controller-tools/pkg/loader"

	"github.com/opgen-sdk/opgen/gen/markers"
)

// checkKubebuilderMarkers reports the +kubebuilder: markers of pkg that
// controller-tools does not know, or whose arguments do not parse, and
// +opgen:controller:owns lists separated by commas, at their positions.
// controller-gen ignores an unknown marker, so it is a warning unless the
// run is strict (Options.StrictMarkers); one that does not parse fails
// controller-gen too. It runs before the collector's errors are added, so
// that its message, with the fix, replaces the collector's about the same
// line.
func (b *apiBuilder) checkKubebuilderMarkers(pkg *loader.Package) {
	pkg.NeedSyntax()
	for _, file := range pkg.Syntax {
		for _, group := range file.Comments {
			for _, c := range group.List {
				text, ok := markerText(c.Text)
				if !ok {
					continue
				}
				found := markers.CheckKubebuilder(text, b.ctx.Collector.Registry)
				if found.Msg == "" {
					found.Msg = markers.CheckOwnsList(text)
				}
				switch {
				case found.Msg == "":
				case found.Ignored && !b.ctx.Project.StrictMarkers:
					b.ctx.Warnings.Add(b.ctx.Position(c.Pos()), "%s; opgen generate --strict-markers makes this an error", found.Msg)
				default:
					b.ctx.Errors.Add(b.ctx.Position(c.Pos()), "%s", found.Msg)
				}
			}
		}
	}
}

// checkFieldTypes reports the fields of pkg's types that cannot be part of
// a Kubernetes API, at the field, before any generator meets them with a
// less helpful message: channels, functions, untyped interfaces and, unless
// the run allows them, floats. A field that is not serialized is in no
// schema, but the deepcopy generator still copies it, unless its type has
// a DeepCopyInto of its own.
func (b *apiBuilder) checkFieldTypes(pkg *loader.Package) {
	copied := ownDeepCopies(pkg)
	for _, file := range pkg.Syntax {
		for _, ts := range TypeSpecs(file) {
			switch t := ts.Type.(type) {
			case *ast.StructType:
				b.checkStruct(ts.Name.Name, t, copied[ts.Name.Name])
			case *ast.InterfaceType:
				// An interface type is not data; the deepcopy generator
				// skips it.
			default:
				b.checkNamedType(ts)
			}
		}
	}
}

// ownDeepCopies returns the types of pkg that declare DeepCopyInto
// themselves: the deepcopy generator leaves them alone.
func ownDeepCopies(pkg *loader.Package) map[string]bool {
	out := map[string]bool{}
	for _, f := range pkg.Syntax {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil && fn.Name.Name == "DeepCopyInto" {
				out[ReceiverName(fn)] = true
			}
		}
	}
	return out
}

// checkStruct checks the fields of a struct type; ownCopy says that the
// type declares its own DeepCopyInto.
func (b *apiBuilder) checkStruct(typeName string, st *ast.StructType, ownCopy bool) {
	for _, f := range st.Fields.List {
		inSchema := serialized(f)
		if !inSchema && ownCopy {
			continue
		}
		name := typeName
		if len(f.Names) > 0 {
			name += "." + f.Names[0].Name
		}
		ast.Inspect(f.Type, func(n ast.Node) bool {
			msg := badFieldType(n, b.ctx.Project.AllowDangerousTypes)
			if !inSchema {
				msg = notCopyable(n, typeName)
			}
			if msg != "" {
				b.ctx.Errors.Add(b.ctx.Position(n.Pos()), "field %s: %s", name, msg)
				return false
			}
			return true
		})
	}
}

// notCopyable says why the deepcopy generator cannot copy a type
// expression inside a field that is not serialized, or "".
func notCopyable(n ast.Node, typeName string) string {
	what := ""
	switch t := n.(type) {
	case *ast.ChanType:
		what = "a channel"
	case *ast.FuncType:
		what = "a function"
	case *ast.InterfaceType:
		what = "an untyped value (interface{} or any)"
	case *ast.Ident:
		if t.Name == "any" {
			what = "an untyped value (interface{} or any)"
		}
	}
	if what == "" {
		return ""
	}
	return fmt.Sprintf("the field is in no schema, but the generated DeepCopyInto of %s copies every field, and it cannot copy %s: write DeepCopyInto and DeepCopy for %s yourself (the generator then leaves the type alone), or keep the value outside the API types", typeName, what, typeName)
}

// serialized reports whether encoding/json writes field f: not when its
// tag is json:"-", nor when it is unexported. Such a field is in no
// schema, so nothing about its type is refused (controller-gen skips it
// too).
func serialized(f *ast.Field) bool {
	if f.Tag != nil {
		if tag, err := strconv.Unquote(f.Tag.Value); err == nil && reflect.StructTag(tag).Get("json") == "-" {
			return false
		}
	}
	for _, n := range f.Names {
		if n.IsExported() {
			return true
		}
	}
	return len(f.Names) == 0
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
