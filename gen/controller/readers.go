package controller

import (
	"strings"

	"github.com/dave/jennifer/jen"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/opgen-sdk/opgen/gen/markers"
	"github.com/opgen-sdk/opgen/internal/builtinkinds"
)

const informersPkg = "k8s.io/client-go/informers"

// builtinKind returns the entry of the built-in kinds' table for gvk.
func builtinKind(gvk schema.GroupVersionKind) (builtinkinds.Info, bool) {
	return builtinkinds.Lookup(gvk.Group, gvk.Version, gvk.Kind)
}

// readable returns the kinds a controller gets readers for: those it reads,
// then the built-in kinds it owns (owns implies reads), without repeats.
func readable(spec *markers.ControllerSpec) []builtinkinds.Info {
	var out []builtinkinds.Info
	seen := map[schema.GroupVersionKind]bool{}
	for _, gvk := range append(append([]schema.GroupVersionKind{}, spec.Reads...), spec.Owns...) {
		info, ok := builtinKind(gvk)
		if !ok || seen[gvk] {
			continue
		}
		seen[gvk] = true
		out = append(out, info)
	}
	return out
}

// readers writes <name>Readers, New<name>Readers and one method per
// readable kind, when the controller named name has any.
func readers(f *jen.File, name string, spec *markers.ControllerSpec) {
	readKinds := readable(spec)
	if len(readKinds) == 0 {
		return
	}
	typ := name + "Readers"
	op := jen.Op("*").Qual(runtimePkg, "Operator")
	f.Line()
	f.Commentf("%s returns typed readers of the operator's caches for the kinds that", typ)
	f.Commentf("the +opgen:controller:reads and owns markers of %s name; the generated", name)
	f.Comment("role grants get, list and watch on them. Each method requests the kind's")
	f.Comment("informers in every namespace the operator watches, which Run starts and")
	f.Comment("syncs: call it in the handler's constructor, before the operator runs,")
	f.Comment("and keep the Reader.")
	f.Type().Id(typ).Struct(jen.Id("op").Add(op.Clone()))
	f.Line()
	f.Commentf("New%s returns the readers of %s's controller on op's caches.", typ, name)
	f.Func().Id("New" + typ).Params(jen.Id("op").Add(op.Clone())).Id(typ).Block(
		jen.Return(jen.Id(typ).Values(jen.Id("op").Op(":").Id("op"))),
	)
	for _, k := range readKinds {
		obj := jen.Op("*").Qual(k.Package, k.Kind)
		f.ImportAlias(k.Package, k.Alias)
		f.Line()
		f.Commentf("%s reads %s objects from the operator's caches.", k.Func, k.Marker)
		f.Func().Params(jen.Id("r").Id(typ)).Id(k.Func).Params().Op("*").Qual(runtimePkg, "Reader").Types(obj.Clone()).Block(
			jen.Return(jen.Qual(runtimePkg, "Read").Types(obj.Clone()).Call(
				jen.Id("r").Dot("op"),
				jen.Qual(k.Package, "SchemeGroupVersion").Dot("WithKind").Call(jen.Lit(k.Kind)),
				jen.Lit(k.Resource),
				jen.Lit(k.Namespaced),
				jen.Func().Params(jen.Id("f").Qual(informersPkg, "SharedInformerFactory")).Qual(cachePkg, "SharedIndexInformer").Block(
					jen.Return(jen.Id("f").Dot(informerGroup(k.Group)).Call().Dot(versionMethod(k.Version)).Call().Dot(k.Func).Call().Dot("Informer").Call()),
				),
			)),
		)
	}
}

func informerGroupName(group string) string {
	if group == "" {
		return "core"
	}
	return strings.SplitN(group, ".", 2)[0]
}

// informerGroup is the method of client-go's SharedInformerFactory for
// group: Core, Apps, Rbac (rbac.authorization.k8s.io).
func informerGroup(group string) string { return upperFirst(informerGroupName(group)) }

// versionMethod is the method of an informer group for version: V1,
// V1beta1, V2.
func versionMethod(version string) string { return upperFirst(version) }

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
