package model

// Field types: what cannot be part of a CRD's schema, and what the deepcopy
// generator cannot copy. Each check stands in for a reference tool's
// failure, with the field's position and the fix, and applies only where
// that tool would fail, so that what controller-gen accepts opgen accepts
// too:
//
//   - controller-gen's CRD generator reads the types a CRD kind reaches
//     through its serialized fields, in packages not marked
//     +kubebuilder:skip. A float, a channel or an untyped value is refused
//     there and nowhere else: a component config (a root object without
//     ObjectMeta, which makes no CRD) may hold a float.
//   - its object generator copies every field, serialized or not, of the
//     exported types of an API package, except those that declare their own
//     DeepCopyInto or are marked +kubebuilder:object:generate=false: a
//     channel, a function or an untyped value cannot be copied there.
//
// A check runs only when its generator does (Options.Checks).

import (
	"fmt"
	"go/ast"
	"reflect"
	"strconv"
	"strings"

	"sigs.k8s.io/controller-tools/pkg/loader"
	ctmarkers "sigs.k8s.io/controller-tools/pkg/markers"
)

// Checks say which generators' checks of the field types a run makes.
type Checks struct {
	// Schemas checks the types the CRDs are built from (the run builds
	// CRDs).
	Schemas bool
	// DeepCopies checks the types the deepcopy generator copies (the run
	// writes deep copies).
	DeepCopies bool
	// Clients says the run writes clients: the model says which kinds
	// get none, and why.
	Clients bool
}

// typeKey names a type of a loaded package.
type typeKey struct{ pkg, name string }

// typeDecl is a type declaration of a loaded package, with its file, which
// resolves the package names its type expression uses.
type typeDecl struct {
	spec *ast.TypeSpec
	file *ast.File
	pkg  *loader.Package
}

// checkFieldTypes reports, at the field, what the generators of the run
// would refuse in the types of the API packages (see the top of this
// file).
func (b *apiBuilder) checkFieldTypes(api *API) {
	decls := typeDecls(b.in.Roots)
	reported := map[ast.Node]bool{}
	if b.in.Options.Checks.Schemas {
		for key := range schemaTypes(api, decls) {
			d := decls[key]
			b.checkSchemaType(d.spec, reported)
		}
	}
	if b.in.Options.Checks.DeepCopies {
		for _, pkg := range b.grouped {
			b.checkCopiedTypes(pkg, reported)
		}
	}
}

// typeDecls indexes the type declarations of pkgs.
func typeDecls(pkgs []*loader.Package) map[typeKey]typeDecl {
	out := map[typeKey]typeDecl{}
	for _, pkg := range pkgs {
		for _, file := range pkg.Syntax {
			for _, d := range file.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok {
					continue
				}
				for _, s := range gd.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						out[typeKey{pkg.PkgPath, ts.Name.Name}] = typeDecl{spec: ts, file: file, pkg: pkg}
					}
				}
			}
		}
	}
	return out
}

// schemaTypes returns the types of decls that the schema of some CRD is
// built from: the kinds of every version not marked +kubebuilder:skip, and
// what their serialized fields reach, as controller-gen's CRD parser walks
// them. Types of packages the run did not load are not the project's to
// check.
func schemaTypes(api *API, decls map[typeKey]typeDecl) map[typeKey]bool {
	reached := map[typeKey]bool{}
	var visit func(key typeKey)
	visit = func(key typeKey) {
		d, ok := decls[key]
		if !ok || reached[key] {
			return
		}
		reached[key] = true
		eachTypeRef(d, d.spec.Type, visit)
	}
	for _, v := range api.Versions() {
		if v.NoCRD {
			continue
		}
		for _, k := range v.Kinds {
			visit(typeKey{v.ImportPath, k.Name})
		}
	}
	return reached
}

// eachTypeRef calls fn with every named type expr refers to, skipping the
// fields that are not serialized.
func eachTypeRef(d typeDecl, expr ast.Expr, fn func(typeKey)) {
	ast.Inspect(expr, func(n ast.Node) bool {
		switch t := n.(type) {
		case *ast.Field:
			if serialized(t) {
				eachTypeRef(d, t.Type, fn)
			}
			return false
		case *ast.Ident:
			fn(typeKey{d.pkg.PkgPath, t.Name})
		case *ast.SelectorExpr:
			if x, ok := t.X.(*ast.Ident); ok {
				if path := importPath(d, x.Name); path != "" {
					fn(typeKey{path, t.Sel.Name})
				}
			}
			return false
		}
		return true
	})
}

// importPath returns the import path that name stands for in d's file, or
// "".
func importPath(d typeDecl, name string) string {
	for _, spec := range d.file.Imports {
		path, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		switch {
		case spec.Name != nil && spec.Name.Name == name:
			return path
		case spec.Name != nil:
		case importedName(d.pkg, path) == name:
			return path
		}
	}
	return ""
}

// importedName is the name of the package path that pkg imports: the
// loaded package's own, or the last element of its path.
func importedName(pkg *loader.Package, path string) string {
	if imp := pkg.Imports()[path]; imp != nil && imp.Name != "" {
		return imp.Name
	}
	return path[strings.LastIndex(path, "/")+1:]
}

// checkSchemaType reports what cannot be in a CRD schema among the
// serialized fields of a type a CRD reaches.
func (b *apiBuilder) checkSchemaType(ts *ast.TypeSpec, reported map[ast.Node]bool) {
	st, ok := ts.Type.(*ast.StructType)
	if !ok {
		b.inspect(ts.Type, "type "+ts.Name.Name, true, reported, func(n ast.Node) string { return badFieldType(n, true) })
		return
	}
	for _, f := range st.Fields.List {
		if serialized(f) {
			b.inspect(f.Type, "field "+fieldName(ts.Name.Name, f), true, reported, func(n ast.Node) string {
				return badFieldType(n, b.in.Options.AllowDangerousTypes)
			})
		}
	}
}

// isFloat reports whether n names a float type.
func isFloat(n ast.Node) bool {
	id, ok := n.(*ast.Ident)
	return ok && (id.Name == "float32" || id.Name == "float64")
}

// checkCopiedTypes reports the fields the deepcopy generator would copy
// and cannot, in the exported types of pkg it generates deep copies of.
func (b *apiBuilder) checkCopiedTypes(pkg *loader.Package, reported map[ast.Node]bool) {
	own := ownDeepCopies(pkg)
	_ = ctmarkers.EachType(b.in.Collector, pkg, func(info *ctmarkers.TypeInfo) {
		ts := info.RawSpec
		if !ast.IsExported(ts.Name.Name) || own[ts.Name.Name] {
			return
		}
		if gen, ok := info.Markers.Get("kubebuilder:object:generate").(bool); ok && !gen {
			return
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return
		}
		for _, f := range st.Fields.List {
			b.inspect(f.Type, "field "+fieldName(ts.Name.Name, f), false, reported, func(n ast.Node) string { return notCopyable(n, ts.Name.Name) })
		}
	})
}

// inspect reports, once per node, the first problem check finds in expr.
// In a schema, the fields of an anonymous struct that are not serialized
// are left out.
func (b *apiBuilder) inspect(expr ast.Expr, what string, schema bool, reported map[ast.Node]bool, check func(ast.Node) string) {
	ast.Inspect(expr, func(n ast.Node) bool {
		if f, ok := n.(*ast.Field); ok && schema && !serialized(f) {
			return false
		}
		msg := check(n)
		if msg == "" {
			return true
		}
		if !reported[n] {
			reported[n] = true
			to := b.in.Errors
			if isFloat(n) && !b.in.Options.StrictTypes {
				// Valid in a CRD, only unwise: controller-gen asks for its
				// option, opgen warns unless --strict.
				to = b.in.Warnings
				msg += "; the CRD takes it as a number; opgen generate --strict makes this an error"
			}
			to.Add(b.in.Fset.Position(n.Pos()), "%s: %s", what, msg)
		}
		return false
	})
}

func fieldName(typeName string, f *ast.Field) string {
	if len(f.Names) > 0 {
		return typeName + "." + f.Names[0].Name
	}
	return typeName
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

// notCopyable says why the deepcopy generator cannot copy a type
// expression inside a field, or "".
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
		switch t.Name {
		case "any":
			what = "an untyped value (interface{} or any)"
		case "error":
			what = "an error value (an interface)"
		}
	}
	if what == "" {
		return ""
	}
	return fmt.Sprintf("the generated DeepCopyInto of %s copies every field, and it cannot copy %s: write DeepCopyInto and DeepCopy for %s yourself (the generator then leaves the type alone), mark %s +kubebuilder:object:generate=false, or keep the value outside the API types", typeName, what, typeName, typeName)
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
				return "floats are refused because clients in other languages round them differently; use resource.Quantity, an integer in a smaller unit or a string, or, to keep the float, run opgen generate with --allow-dangerous-types (controller-gen's crd:allowDangerousTypes=true)"
			}
		}
	}
	return ""
}

const untyped = "an untyped value (interface{} or any) has no schema; use apiextensionsv1.JSON (k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1) for free-form JSON, or a typed struct or map"
