// Package register generates zz_generated.register.go for every API
// package: the group and version (GroupName, SchemeGroupVersion), the
// scheme registration of its kinds and their lists (SchemeBuilder,
// AddToScheme) and the Kind and Resource helpers that client-go's
// generated listers and error helpers call.
//
// A package that registers its kinds itself (it declares AddToScheme, as
// kubebuilder's groupversion_info.go does) is left alone.
package register

import (
	"go/ast"
	"path/filepath"

	"github.com/dave/jennifer/jen"
	"sigs.k8s.io/controller-tools/pkg/markers"

	"github.com/opgen-sdk/opgen/gen"
)

// FileName is the file the generator writes into each API package.
const FileName = "zz_generated.register.go"

const (
	metav1  = "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtime = "k8s.io/apimachinery/pkg/runtime"
	schema  = "k8s.io/apimachinery/pkg/runtime/schema"
)

// Generator writes the registration of each API package.
type Generator struct{}

var _ gen.Generator = Generator{}

// RegisterMarkers registers nothing: the generator reads the API model,
// built from +groupName and +kubebuilder:object:root.
func (Generator) RegisterMarkers(*markers.Registry) error { return nil }

// Generate writes one file per API package.
func (Generator) Generate(ctx *gen.Context) error {
	ctx.OwnInEveryPackage(FileName)
	for _, v := range ctx.API.Versions() {
		if declaresOwnRegistration(v) {
			continue
		}
		ctx.Output.JenAPI(filepath.Join(v.Dir, FileName), File(v))
	}
	return nil
}

// File returns the registration file of v.
func File(v *gen.Version) *jen.File {
	f := jen.NewFilePathName(v.ImportPath, v.Package.Name)
	f.ImportAlias(metav1, "metav1")
	f.Comment("GroupName is the API group of the kinds in this package.")
	f.Const().Id("GroupName").Op("=").Lit(v.Group.Name)
	f.Line()
	f.Comment("SchemeGroupVersion is the group and version of the kinds in this package.")
	f.Var().Id("SchemeGroupVersion").Op("=").Qual(schema, "GroupVersion").Values(jen.Dict{
		jen.Id("Group"):   jen.Id("GroupName"),
		jen.Id("Version"): jen.Lit(v.Name),
	})
	f.Line()
	f.Comment("Kind takes an unqualified kind and returns a group-qualified GroupKind.")
	f.Func().Id("Kind").Params(jen.Id("kind").String()).Qual(schema, "GroupKind").Block(
		jen.Return(jen.Id("SchemeGroupVersion").Dot("WithKind").Call(jen.Id("kind")).Dot("GroupKind").Call()),
	)
	f.Line()
	f.Comment("Resource takes an unqualified resource and returns a group-qualified GroupResource.")
	f.Func().Id("Resource").Params(jen.Id("resource").String()).Qual(schema, "GroupResource").Block(
		jen.Return(jen.Id("SchemeGroupVersion").Dot("WithResource").Call(jen.Id("resource")).Dot("GroupResource").Call()),
	)
	f.Line()
	f.Var().Defs(
		jen.Comment("SchemeBuilder collects the functions that add this package's kinds to a scheme."),
		jen.Id("SchemeBuilder").Op("=").Qual(runtime, "NewSchemeBuilder").Call(jen.Id("addKnownTypes")),
		jen.Comment("AddToScheme adds this package's kinds to a scheme."),
		jen.Id("AddToScheme").Op("=").Id("SchemeBuilder").Dot("AddToScheme"),
	)
	f.Line()
	var objs []jen.Code
	for _, k := range v.Kinds {
		objs = append(objs, jen.Op("&").Id(k.Name).Values(), jen.Op("&").Id(k.Name+"List").Values())
	}
	f.Comment("addKnownTypes adds the kinds and their lists to scheme.")
	f.Func().Id("addKnownTypes").Params(jen.Id("scheme").Op("*").Qual(runtime, "Scheme")).Error().Block(
		jen.Id("scheme").Dot("AddKnownTypes").Call(append([]jen.Code{jen.Id("SchemeGroupVersion")}, objs...)...),
		jen.Qual(metav1, "AddToGroupVersion").Call(jen.Id("scheme"), jen.Id("SchemeGroupVersion")),
		jen.Return(jen.Nil()),
	)
	return f
}

// declaresOwnRegistration reports whether a file of v other than opgen's
// declares AddToScheme.
func declaresOwnRegistration(v *gen.Version) bool {
	for _, file := range v.Package.Syntax {
		if obj := file.Scope.Lookup("AddToScheme"); obj != nil && obj.Kind == ast.Var {
			return true
		}
	}
	return false
}
