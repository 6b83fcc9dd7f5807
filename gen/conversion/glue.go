package conversion

import (
	"path/filepath"

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
	if len(ctx.API.Conversions) == 0 {
		return
	}
	f := jen.NewFilePathName(p.ImportPath(p.ControllerDir), controller.PackageName(p))
	f.ImportName(runtimePkg, "runtime")
	f.ImportAlias(k8sRuntime, "k8sruntime")
	var adds, serves []jen.Code
	seen := map[*gen.Version]bool{}
	add := func(v *gen.Version) {
		if !seen[v] {
			seen[v] = true
			f.ImportAlias(v.ImportPath, v.Alias())
			adds = append(adds, jen.Qual(v.ImportPath, "AddToScheme").Call(jen.Id("scheme")))
		}
	}
	for _, c := range ctx.API.Conversions {
		add(c.Hub.Version)
		for _, k := range c.Spokes {
			add(k.Version)
		}
		serves = append(serves, jen.Qual(webhookPkg, "Convert").Call(
			jen.Id("op"), jen.Id("scheme"),
			jen.Qual(c.Hub.Version.ImportPath, "SchemeGroupVersion").Dot("WithKind").Call(jen.Lit(c.Hub.Name)),
			jen.Lit(c.Resource()),
		))
	}
	f.Commentf("%s serves the conversion webhook of every kind whose served versions", SetupFunc)
	f.Comment("differ, between its hub and each spoke, with the generated conversions")
	f.Comment("(zz_generated.conversion.go of each spoke) and the user's (conversion.go).")
	f.Func().Id(SetupFunc).Params(jen.Id("op").Op("*").Qual(runtimePkg, "Operator")).Error().Block(
		jen.Id("scheme").Op(":=").Qual(k8sRuntime, "NewScheme").Call(),
		jen.If(jen.Err().Op(":=").Qual("errors", "Join").Custom(multiline, adds...), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit("build the conversion scheme: %w"), jen.Err())),
		),
		jen.Return(jen.Qual("errors", "Join").Custom(multiline, serves...)),
	)
	ctx.Output.Jen(path, f)
}

var multiline = jen.Options{Open: "(", Close: ")", Separator: ",", Multi: true}
