package conversion

import (
	"path/filepath"

	"github.com/opgen-sdk/opgen/gen/model"

	"github.com/dave/jennifer/jen"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/controller"
)

// SetupFunc is the function of the controller package, in GlueFile, that
// the generated Setup calls to serve the conversions.
const SetupFunc = "setupConversions"

// GlueFile is the generated file of the controller package that serves the
// conversions.
const GlueFile = "zz_generated.conversion.go"

const (
	webhookPkg = "github.com/opgen-sdk/opgen/pkg/webhook"
	runtimePkg = "github.com/opgen-sdk/opgen/pkg/runtime"
	k8sRuntime = "k8s.io/apimachinery/pkg/runtime"
)

// writeGlue stages GlueFile: setupConversions builds a scheme with every
// version of the converted kinds (their AddToScheme registers the
// generated conversions) and serves each kind's conversions with
// webhook.Convert.
func writeGlue(ctx *gen.Context) {
	p := ctx.Project
	path := filepath.Join(p.Abs(p.ControllerDir), GlueFile)
	ctx.Output.Own(path)
	if !ctx.API.HasConversionWebhook() {
		return
	}
	f := jen.NewFilePathName(p.ImportPath(p.ControllerDir), controller.PackageName(p))
	f.ImportName(runtimePkg, "runtime")
	f.ImportAlias(k8sRuntime, "k8sruntime")
	var adds, serves []jen.Code
	seen := map[*model.Version]bool{}
	add := func(v *model.Version) {
		if !seen[v] {
			seen[v] = true
			f.ImportAlias(v.ImportPath, v.Alias())
			adds = append(adds, jen.Qual(v.ImportPath, "AddToScheme").Call(jen.Id("scheme")))
		}
	}
	var pairs []jen.Code
	for _, c := range ctx.API.ServedConversions() {
		add(c.Hub.Version)
		for _, k := range c.Spokes {
			add(k.Version)
			if c.Convertible {
				pairs = append(pairs, convertiblePair(c.Hub, k)...)
			}
		}
		serves = append(serves, jen.Qual(webhookPkg, "Convert").Call(
			jen.Id("op"), jen.Id("scheme"),
			jen.Qual(c.Hub.Version.ImportPath, "SchemeGroupVersion").Dot("WithKind").Call(jen.Lit(c.Hub.Name)),
			jen.Lit(c.Resource()),
		))
	}
	f.Commentf("%s serves the conversion webhook of every kind whose served versions", SetupFunc)
	f.Comment("differ, between its hub and each spoke, with the generated conversions")
	f.Comment("(zz_generated.conversion.go of each spoke) and the user's (conversion.go),")
	f.Comment("or with the kind's own ConvertTo and ConvertFrom methods.")
	f.Func().Id(SetupFunc).Params(jen.Id("op").Op("*").Qual(runtimePkg, "Operator")).Error().Block(
		jen.Id("scheme").Op(":=").Qual(k8sRuntime, "NewScheme").Call(),
		jen.If(jen.Err().Op(":=").Qual("errors", "Join").Custom(multiline, append(adds, pairs...)...), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit("build the conversion scheme: %w"), jen.Err())),
		),
		jen.Return(jen.Qual("errors", "Join").Custom(multiline, serves...)),
	)
	ctx.Output.Jen(path, f)
}

var multiline = jen.Options{Open: "(", Close: ")", Separator: ",", Multi: true}

// convertiblePair registers, in the conversion scheme, the conversions of
// a kind that converts itself (model.Conversion.Convertible): the spoke's
// ConvertTo and ConvertFrom, the methods controller-runtime's conversion
// package calls. The calls are typed, so the glue needs no import of
// controller-runtime: the hub's type satisfies its conversion.Hub.
func convertiblePair(hub, spoke *model.Kind) []jen.Code {
	h, s := jen.Qual(hub.Version.ImportPath, hub.Name), jen.Qual(spoke.Version.ImportPath, spoke.Name)
	scope := jen.Qual(conversionPkg, "Scope")
	return []jen.Code{
		jen.Id("scheme").Dot("AddConversionFunc").Call(jen.Parens(jen.Op("*").Add(s)).Call(jen.Nil()), jen.Parens(jen.Op("*").Add(h)).Call(jen.Nil()),
			jen.Func().Params(jen.Id("in"), jen.Id("out").Any(), jen.Id("_").Add(scope)).Error().Block(
				jen.Return(jen.Id("in").Assert(jen.Op("*").Add(s)).Dot("ConvertTo").Call(jen.Id("out").Assert(jen.Op("*").Add(h)))),
			)),
		jen.Id("scheme").Dot("AddConversionFunc").Call(jen.Parens(jen.Op("*").Add(h)).Call(jen.Nil()), jen.Parens(jen.Op("*").Add(s)).Call(jen.Nil()),
			jen.Func().Params(jen.Id("in"), jen.Id("out").Any(), jen.Id("_").Add(scope)).Error().Block(
				jen.Return(jen.Id("out").Assert(jen.Op("*").Add(s)).Dot("ConvertFrom").Call(jen.Id("in").Assert(jen.Op("*").Add(h)))),
			)),
	}
}
