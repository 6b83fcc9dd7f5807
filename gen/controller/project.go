package controller

import (
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/opgen-sdk/opgen/gen/model"
)

// projection writes project<Kind>, the ControllerOptions.Project of a kind
// with +opgen:controller:cacheSpec: it rebuilds each projected field from
// the fields kept.
func (g glue) projection(f *jen.File) {
	k, name := g.k, GlueName(g.k)
	if k.Projection == nil {
		return
	}
	var body []jen.Code
	for _, field := range k.Projection.Fields {
		if field.Sub != nil {
			src := jen.Id("o").Dot(field.Name)
			body = append(body, jen.Id("o").Dot(field.Name).Op("=").Add(projected(field.Sub, src)))
		}
	}
	f.Line()
	f.Commentf("project%s keeps in the controller's cache only the fields of %s's", name, k.Name)
	f.Commentf("spec that +opgen:controller:cacheSpec names: %s.", strings.Join(k.Controller.CacheSpec, ", "))
	f.Func().Id("project" + name).Params(jen.Id("o").Add(g.obj())).Block(body...)
}

// projected is a literal of p's struct holding the fields kept of src.
func projected(p *model.Projection, src *jen.Statement) *jen.Statement {
	d := jen.Dict{}
	for _, field := range p.Fields {
		from := src.Clone().Dot(field.Name)
		if field.Sub != nil {
			d[jen.Id(field.Name)] = projected(field.Sub, from)
			continue
		}
		d[jen.Id(field.Name)] = from
	}
	return jen.Qual(p.Pkg, p.Type).Values(d)
}
