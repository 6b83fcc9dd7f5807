// Package accessors generates zz_generated.accessors.go for every API
// package: the status accessors the runtime reads and writes through
// apis.ObservedGenerationObject and apis.ConditionsObject.
//
// A root kind gets GetObservedGeneration and SetObservedGeneration when its
// Status has an ObservedGeneration int64 field, and GetConditions and
// SetConditions when its Status has a Conditions []metav1.Condition field,
// directly or promoted from an embedded struct such as apis.Status. A
// method the user declared is not generated again. Each kind that gets a
// pair also gets a compile-time check that it implements the interface.
// In a module that does not require opgen, nothing is written.
package accessors

import (
	"go/types"
	"path/filepath"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/opgen-sdk/opgen/gen"
)

// FileName is the file the generator writes into each API package.
const FileName = "zz_generated.accessors.go"

const (
	metav1 = "k8s.io/apimachinery/pkg/apis/meta/v1"
	apis   = "github.com/opgen-sdk/opgen/apis"
)

// Generator writes the status accessors of each API package; they follow
// from the types.
type Generator struct{ gen.NoMarkers }

var _ gen.Generator = Generator{}

// Generate writes one file per API package that has accessors to add. In
// a module that does not require opgen, which uses opgen as it would
// controller-gen, it writes none: the file's checks import opgen's apis,
// and nothing there reads the accessors.
func (Generator) Generate(ctx *gen.Context) error {
	ctx.OwnInEveryPackage(FileName)
	if !ctx.Project.UsesOpgen {
		return nil
	}
	for _, v := range ctx.API.Versions() {
		ctx.Checker.Check(v.Package)
		if v.Package.Types == nil {
			continue // the type errors are reported with the package's
		}
		f := jen.NewFilePathName(v.ImportPath, v.Package.Name)
		f.ImportAlias(metav1, "metav1")
		n := 0
		for _, k := range v.Kinds {
			n += addKind(f, v.Package.Types, k.Name)
		}
		if n > 0 {
			ctx.Output.JenAPI(filepath.Join(v.Dir, FileName), f)
		}
	}
	return nil
}

// accessor is one pair of methods on a status field.
type accessor struct {
	field, get, set, iface string
	// is reports whether a field type fits.
	is func(types.Type) bool
	// typ is the field type in generated code.
	typ func() *jen.Statement
}

var accessors = []accessor{
	{
		field: "ObservedGeneration", get: "GetObservedGeneration", set: "SetObservedGeneration",
		iface: "ObservedGenerationObject",
		is:    func(t types.Type) bool { return types.Identical(t, types.Typ[types.Int64]) },
		typ:   func() *jen.Statement { return jen.Int64() },
	},
	{
		field: "Conditions", get: "GetConditions", set: "SetConditions",
		iface: "ConditionsObject",
		is:    isConditions,
		typ:   func() *jen.Statement { return jen.Index().Qual(metav1, "Condition") },
	},
}

// addKind adds the accessors kind lacks to f and returns how many pairs it
// added.
func addKind(f *jen.File, pkg *types.Package, kind string) int {
	obj, ok := pkg.Scope().Lookup(kind).(*types.TypeName)
	if !ok {
		return 0
	}
	status, ok := fieldOf(obj.Type(), pkg, "Status")
	if !ok {
		return 0
	}
	pointer := false
	statusType := status.Type()
	if p, ok := statusType.(*types.Pointer); ok {
		pointer, statusType = true, p.Elem()
	}
	n := 0
	for _, a := range accessors {
		field, ok := fieldOf(statusType, pkg, a.field)
		if !ok || !a.is(field.Type()) || declaredByUser(obj.Type(), pkg, a.get) || declaredByUser(obj.Type(), pkg, a.set) {
			continue
		}
		writeAccessor(f, kind, statusTypeName(statusType, pkg), pointer, a)
		n++
	}
	return n
}

func writeAccessor(f *jen.File, kind, statusType string, pointer bool, a accessor) {
	field := jen.Id("in").Dot("Status").Dot(a.field)
	f.Commentf("%s returns .status.%s; the runtime reads it through apis.%s.", a.get, lowerFirst(a.field), a.iface)
	getBody := []jen.Code{jen.Return(field)}
	if pointer {
		getBody = []jen.Code{jen.If(jen.Id("in").Dot("Status").Op("==").Nil()).Block(jen.Return(zero(a))), jen.Return(field)}
	}
	f.Func().Params(jen.Id("in").Op("*").Id(kind)).Id(a.get).Params().Add(a.typ()).Block(getBody...)
	f.Line()
	f.Commentf("%s sets .status.%s; the runtime writes it through apis.%s.", a.set, lowerFirst(a.field), a.iface)
	var setBody []jen.Code
	if pointer {
		setBody = append(setBody, jen.If(jen.Id("in").Dot("Status").Op("==").Nil()).Block(
			jen.Id("in").Dot("Status").Op("=").Op("&").Id(statusType).Values(),
		))
	}
	setBody = append(setBody, jen.Id("in").Dot("Status").Dot(a.field).Op("=").Id("v"))
	f.Func().Params(jen.Id("in").Op("*").Id(kind)).Id(a.set).Params(jen.Id("v").Add(a.typ())).Block(setBody...)
	f.Line()
	f.Var().Id("_").Qual(apis, a.iface).Op("=").Parens(jen.Op("*").Id(kind)).Parens(jen.Nil())
	f.Line()
}

func zero(a accessor) jen.Code {
	if a.field == "Conditions" {
		return jen.Nil()
	}
	return jen.Lit(0)
}

// fieldOf finds the field name of struct type t, promoted fields included.
func fieldOf(t types.Type, pkg *types.Package, name string) (*types.Var, bool) {
	obj, _, _ := types.LookupFieldOrMethod(t, true, pkg, name)
	v, ok := obj.(*types.Var)
	return v, ok && v.IsField()
}

// declaredByUser reports whether *t has the method name. opgen's own
// accessors are not seen: their file is excluded from loading by its build
// constraint.
func declaredByUser(t types.Type, pkg *types.Package, name string) bool {
	obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(t), true, pkg, name)
	_, ok := obj.(*types.Func)
	return ok
}

func isConditions(t types.Type) bool {
	s, ok := t.(*types.Slice)
	if !ok {
		return false
	}
	n, ok := s.Elem().(*types.Named)
	return ok && n.Obj().Name() == "Condition" && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == metav1
}

func statusTypeName(t types.Type, pkg *types.Package) string {
	return types.TypeString(t, func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Name()
	})
}

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }
