// Package register generates zz_generated.register.go for every API
// package: the group and version (GroupName, SchemeGroupVersion, and
// GroupVersion, its name in kubebuilder's code), the
// scheme registration of its kinds and their lists (SchemeBuilder,
// AddToScheme) and the Kind and Resource helpers that client-go's
// generated listers and error helpers call.
//
// A package whose zz_generated.register.go was written by code-generator's
// register-gen keeps register-gen's declarations (GroupVersion, Install,
// the deprecated SchemeGroupVersion and AddToScheme, localSchemeBuilder),
// which code written for it uses; the file is then opgen's.
//
// A package that registers its kinds itself (it declares AddToScheme, as
// kubebuilder's groupversion_info.go does) keeps its registration: the
// file then declares only what the generated clients and glue use and the
// package lacks (SchemeGroupVersion, Kind, Resource), or is not written.
package register

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/opgen-sdk/opgen/gen/model"

	"github.com/dave/jennifer/jen"

	"github.com/opgen-sdk/opgen/gen"
)

// FileName is the file the generator writes into each API package.
const FileName = "zz_generated.register.go"

const (
	metav1  = "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtime = "k8s.io/apimachinery/pkg/runtime"
	schema  = "k8s.io/apimachinery/pkg/runtime/schema"
)

// Generator writes the registration of each API package, from the API
// model (+groupName, +kubebuilder:object:root).
type Generator struct{ gen.NoMarkers }

var _ gen.Generator = Generator{}

// Generate writes one file per API package.
func (Generator) Generate(ctx *gen.Context) error {
	ctx.OwnInEveryPackage(FileName)
	for _, v := range ctx.API.Versions() {
		if declaresOwnRegistration(v) {
			if f := missingFile(v); f != nil {
				ctx.Output.JenAPI(filepath.Join(v.Dir, FileName), f)
			}
			continue
		}
		path := filepath.Join(v.Dir, FileName)
		if writtenByRegisterGen(path) {
			ctx.Output.JenAPI(path, RegisterGenFile(v))
			continue
		}
		ctx.Output.JenAPI(path, File(v))
	}
	return nil
}

// File returns the registration file of v.
func File(v *model.Version) *jen.File {
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
	if !declares(v, "GroupVersion") {
		f.Comment("GroupVersion is SchemeGroupVersion, by the name kubebuilder's")
		f.Comment("groupversion_info.go gives it.")
		f.Var().Id("GroupVersion").Op("=").Id("SchemeGroupVersion")
		f.Line()
	}
	if !declares(v, "Kind") { // Gateway API declares type Kind string
		f.Comment("Kind takes an unqualified kind and returns a group-qualified GroupKind.")
		f.Func().Id("Kind").Params(jen.Id("kind").String()).Qual(schema, "GroupKind").Block(
			jen.Return(jen.Id("SchemeGroupVersion").Dot("WithKind").Call(jen.Id("kind")).Dot("GroupKind").Call()),
		)
		f.Line()
	}
	if !declares(v, "Resource") {
		resourceFunc(f, "Resource takes an unqualified resource and returns a group-qualified GroupResource.")
	}
	f.Var().Defs(
		jen.Comment("SchemeBuilder collects the functions that add this package's kinds to a scheme."),
		jen.Id("SchemeBuilder").Op("=").Qual(runtime, "NewSchemeBuilder").Call(jen.Id("addKnownTypes")),
		jen.Comment("AddToScheme adds this package's kinds to a scheme."),
		jen.Id("AddToScheme").Op("=").Id("SchemeBuilder").Dot("AddToScheme"),
	)
	f.Line()
	var objs []jen.Code
	for _, name := range v.Objects {
		objs = append(objs, jen.Op("&").Id(name).Values())
	}
	f.Comment("addKnownTypes adds the kinds and their lists to scheme.")
	f.Func().Id("addKnownTypes").Params(jen.Id("scheme").Op("*").Qual(runtime, "Scheme")).Error().Block(
		jen.Id("scheme").Dot("AddKnownTypes").Call(append([]jen.Code{jen.Id("SchemeGroupVersion")}, objs...)...),
		jen.Qual(metav1, "AddToGroupVersion").Call(jen.Id("scheme"), jen.Id("SchemeGroupVersion")),
		jen.Return(jen.Nil()),
	)
	return f
}

// missingFile returns the declarations that a package with its own
// registration lacks and generated code uses, or nil when it lacks none.
// kubebuilder's groupversion_info.go declares GroupVersion, SchemeBuilder
// and AddToScheme; code-generator's clients and listers call
// SchemeGroupVersion and Resource.
func missingFile(v *model.Version) *jen.File {
	f := jen.NewFilePathName(v.ImportPath, v.Package.Name)
	wrote := false
	if !declares(v, "SchemeGroupVersion") {
		f.Comment("SchemeGroupVersion is the group and version of the kinds in this package,")
		f.Comment("by the name code-generator's clients use.")
		if declares(v, "GroupVersion") {
			f.Var().Id("SchemeGroupVersion").Op("=").Id("GroupVersion")
		} else {
			f.Var().Id("SchemeGroupVersion").Op("=").Qual(schema, "GroupVersion").Values(jen.Dict{
				jen.Id("Group"):   jen.Lit(v.Group.Name),
				jen.Id("Version"): jen.Lit(v.Name),
			})
		}
		f.Line()
		wrote = true
	}
	if !declares(v, "Kind") {
		f.Comment("Kind takes an unqualified kind and returns a group-qualified GroupKind.")
		f.Func().Id("Kind").Params(jen.Id("kind").String()).Qual(schema, "GroupKind").Block(
			jen.Return(jen.Id("SchemeGroupVersion").Dot("WithKind").Call(jen.Id("kind")).Dot("GroupKind").Call()),
		)
		f.Line()
		wrote = true
	}
	if !declares(v, "Resource") {
		resourceFunc(f, "Resource takes an unqualified resource and returns a group-qualified GroupResource.")
		wrote = true
	}
	if !wrote {
		return nil
	}
	return f
}

// resourceFunc adds Resource, with its doc comment, to f.
func resourceFunc(f *jen.File, comment string) {
	f.Comment(comment)
	f.Func().Id("Resource").Params(jen.Id("resource").String()).Qual(schema, "GroupResource").Block(
		jen.Return(jen.Id("SchemeGroupVersion").Dot("WithResource").Call(jen.Id("resource")).Dot("GroupResource").Call()),
	)
	f.Line()
}

// declaresOwnRegistration reports whether a file of v other than opgen's
// declares AddToScheme.
func declaresOwnRegistration(v *model.Version) bool { return declares(v, "AddToScheme") }

// declares reports whether a file of v other than opgen's declares name
// at package level.
func declares(v *model.Version, name string) bool {
	for _, file := range v.Package.Syntax {
		if file.Scope.Lookup(name) != nil {
			return true
		}
	}
	return false
}

// writtenByRegisterGen reports whether the file at path was written by
// code-generator's register-gen.
func writtenByRegisterGen(path string) bool {
	data, err := os.ReadFile(path)
	return err == nil && (bytes.Contains(data, []byte("// Code generated by register-gen. DO NOT EDIT.")) || bytes.Contains(data, []byte(registerGenShape)))
}

// registerGenShape marks a file that opgen writes in register-gen's shape,
// so that it keeps the shape once the register-gen header is gone.
const registerGenShape = "// This file has register-gen's declarations; opgen keeps them."

// RegisterGenFile returns the registration of v with the declarations of
// register-gen's file, so that code written against it still compiles.
func RegisterGenFile(v *model.Version) *jen.File {
	f := jen.NewFilePathName(v.ImportPath, v.Package.Name)
	f.ImportAlias(metav1, "metav1")
	f.Comment(strings.TrimPrefix(registerGenShape, "// "))
	f.Line()
	f.Comment("GroupName specifies the group name used to register the objects.")
	f.Const().Id("GroupName").Op("=").Lit(v.Group.Name)
	f.Line()
	f.Comment("GroupVersion specifies the group and the version used to register the objects.")
	f.Var().Id("GroupVersion").Op("=").Qual(metav1, "GroupVersion").Values(jen.Dict{jen.Id("Group"): jen.Id("GroupName"), jen.Id("Version"): jen.Lit(v.Name)})
	f.Line()
	f.Comment("SchemeGroupVersion is group version used to register these objects")
	f.Comment("")
	f.Comment("Deprecated: use GroupVersion instead.")
	f.Var().Id("SchemeGroupVersion").Op("=").Qual(schema, "GroupVersion").Values(jen.Dict{jen.Id("Group"): jen.Id("GroupName"), jen.Id("Version"): jen.Lit(v.Name)})
	f.Line()
	resourceFunc(f, "Resource takes an unqualified resource and returns a Group qualified GroupResource")
	f.Var().Defs(
		jen.Comment("localSchemeBuilder and AddToScheme will stay in k8s.io/kubernetes."),
		jen.Id("SchemeBuilder").Qual(runtime, "SchemeBuilder"),
		jen.Id("localSchemeBuilder").Op("=").Op("&").Id("SchemeBuilder"),
		jen.Comment("Deprecated: use Install instead"),
		jen.Id("AddToScheme").Op("=").Id("localSchemeBuilder").Dot("AddToScheme"),
		jen.Id("Install").Op("=").Id("localSchemeBuilder").Dot("AddToScheme"),
	)
	f.Line()
	f.Func().Id("init").Params().Block(
		jen.Id("localSchemeBuilder").Dot("Register").Call(jen.Id("addKnownTypes")),
	)
	f.Line()
	var objs []jen.Code
	for _, name := range v.Objects {
		objs = append(objs, jen.Line().Op("&").Id(name).Values())
	}
	f.Comment("Adds the list of known types to Scheme.")
	f.Func().Id("addKnownTypes").Params(jen.Id("scheme").Op("*").Qual(runtime, "Scheme")).Error().Block(
		jen.Id("scheme").Dot("AddKnownTypes").Call(append(append([]jen.Code{jen.Id("SchemeGroupVersion")}, objs...), jen.Line())...),
		jen.Qual(metav1, "AddToGroupVersion").Call(jen.Id("scheme"), jen.Id("SchemeGroupVersion")),
		jen.Return(jen.Nil()),
	)
	return f
}
