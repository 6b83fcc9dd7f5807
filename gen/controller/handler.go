package controller

import (
	"regexp"
	"strings"

	"github.com/opgen-sdk/opgen/gen/model"

	"github.com/dave/jennifer/jen"

	"github.com/opgen-sdk/opgen/gen"
)

// handlerGlue writes the declarations of one handler type of a built-in
// kind.
type handlerGlue struct {
	p *gen.Project
	h *model.BuiltinController
}

func (g handlerGlue) obj() *jen.Statement { return jen.Op("*").Qual(g.h.Kind.Package, g.h.Kind.Kind) }

func (g handlerGlue) checks(f *jen.File) {
	h := g.h
	f.Line()
	f.Commentf("%s must implement the typed handler of %s.", h.Name, h.Kind.Marker)
	f.Var().Id("_").Qual(plugPkg, "Handler").Types(g.obj()).Op("=").Parens(jen.Op("*").Id(h.Name)).Parens(jen.Nil())
	if !h.HasDelete {
		return
	}
	f.Line()
	f.Commentf("%s has Delete, so the runtime keeps a finalizer on %s and the", h.Name, h.Kind.Resource)
	f.Commentf("generated role grants patch on %s: Delete must be plug.Deleter's.", h.Kind.Resource)
	f.Var().Id("_").Qual(plugPkg, "Deleter").Types(g.obj()).Op("=").Parens(jen.Op("*").Id(h.Name)).Parens(jen.Nil())
}

func (g handlerGlue) options(f *jen.File) {
	h := g.h
	opts := optionFields(h.Name, h.Controller)
	if h.Deletes() {
		opts = append(opts, "Finalizer", jen.Lit(Finalizer(g.p, h)))
	}
	f.Line()
	f.Commentf("%sOptions returns the controller options that the +opgen:controller", h.Name)
	f.Commentf("markers of %s declare.", h.Name)
	f.Func().Id(h.Name+"Options").Params().Qual(runtimePkg, "ControllerOptions").Types(g.obj()).Block(
		jen.Return(jen.Qual(runtimePkg, "ControllerOptions").Types(g.obj()).Add(fields(true, opts...))),
	)
}

func (g handlerGlue) setup(f *jen.File) {
	h := g.h
	var sel []any
	if s := h.Controller.LabelSelector; s != "" {
		sel = append(sel, "LabelSelector", jen.Lit(s))
	}
	kind := jen.Qual(builtinPkg, h.Kind.Func).Call(jen.Id("op"), jen.Qual(builtinPkg, "Options").Add(fields(false, sel...)))
	f.Line()
	f.Commentf("Setup%s registers h as a controller of %s, watched through", h.Name, h.Kind.Marker)
	f.Comment("client-go's typed client (package builtin). When h implements")
	f.Comment("runtime.Configurer, its Configure method adjusts the options first.")
	f.Func().Id("Setup"+h.Name).Params(
		jen.Id("op").Op("*").Qual(runtimePkg, "Operator"),
		jen.Id("h").Op("*").Id(h.Name),
	).Error().Block(register(h.Name, kind)...)
}

// Finalizer is the finalizer the runtime keeps for handler h when it has
// Delete: <project>.opgen.dev/<handler>, such as
// shop-operator.opgen.dev/podprinter. A built-in kind's group is not the
// operator's to name finalizers after, and the runtime's default
// (pod.opgen.dev/finalizer) would be shared by every handler of the kind,
// in this operator and others, so that one removing it would take it from
// the others. Renaming the project or the type renames the finalizer:
// objects that carry the old one keep it until it is removed by hand.
func Finalizer(p *gen.Project, h *model.BuiltinController) string {
	return dnsLabel(p.Name, "operator") + ".opgen.dev/" + dnsLabel(h.Name, "handler")
}

var notLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// dnsLabel turns s into a DNS label (lower case, [a-z0-9-], at most 63
// characters, starting and ending with a letter or digit), or fallback.
func dnsLabel(s, fallback string) string {
	l := notLabel.ReplaceAllString(strings.ToLower(s), "-")
	if len(l) > 63 {
		l = l[:63]
	}
	if l = strings.Trim(l, "-"); l == "" {
		return fallback
	}
	return l
}

// clashes reports handler types whose glue would clash with the glue of a
// kind: the same Setup or Options function, or a type the kind's glue
// expects to handle the kind. It returns true when there was one.
func clashes(ctx *gen.Context, kinds []*model.Kind, handlers []*model.BuiltinController) bool {
	declared := map[string]*model.Kind{}
	for _, k := range kinds {
		n := GlueName(k)
		for _, id := range []string{n + "Kind", n + "Options", "Setup" + n, HandlerName(k)} {
			declared[id] = k
		}
	}
	found := false
	for _, h := range handlers {
		if k := declared[h.Name]; k != nil && h.Name == HandlerName(k) {
			ctx.Errors.Add(h.Pos, "%s is the handler type of the %s controller (+opgen:controller on %s, %s), so it cannot also handle %s: give the handler of %s another name", h.Name, k.Name, k.Name, k.Pos, h.Kind.Marker, h.Kind.Marker)
			found = true
			continue
		}
		for _, id := range []string{h.Name + "Options", "Setup" + h.Name} {
			if k := declared[id]; k != nil {
				ctx.Errors.Add(h.Pos, "the glue of handler type %s would declare %s, which the glue of kind %s (%s) declares too: rename the handler type (%sHandler, say)", h.Name, id, k.Name, k.Pos, h.Name)
				found = true
				break
			}
		}
	}
	return found
}
