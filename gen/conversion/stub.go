package conversion

import (
	"bytes"
	"strings"

	"github.com/opgen-sdk/opgen/gen/model"

	"github.com/dave/jennifer/jen"
)

const conversionPkg = "k8s.io/apimachinery/pkg/conversion"

// stubFileSource renders a stub file of spoke v: one stub per function
// it needs, which converts what conversion-gen can and returns the stub's
// error for the rest. A stub compiles beside conversion-gen's output,
// which the run writes with it.
func stubFileSource(v *model.Version, hubs []*model.Version, needs []*need) ([]byte, error) {
	f := jen.NewFilePathName(v.ImportPath, v.Package.Name)
	f.HeaderComment("This file is yours: opgen wrote it once, with a stub of each conversion")
	f.HeaderComment("it cannot generate, and never overwrites it. Generation fails while a")
	f.HeaderComment("function still returns its stub's error (\"conversion of field ... not written\").")
	for _, n := range needs {
		in, out := typeCode(v, hubs, n.from, n.typ), typeCode(v, hubs, n.to, n.toType)
		f.Commentf("%s converts what opgen cannot: %s.", n.fn, fieldsText(n))
		var body []jen.Code
		if n.site == nil {
			body = append(body, jen.If(jen.Err().Op(":=").Id("auto"+n.fn).Call(jen.Id("in"), jen.Id("out"), jen.Id("s")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())))
		}
		body = append(body,
			jen.Comment("TODO: set out from in for "+fieldsText(n)+", then return nil."),
			jen.Return(jen.Qual("errors", "New").Call(jen.Lit(stubPrefix+strings.Join(named(n), ", ")+stubSuffix))),
		)
		f.Func().Id(n.fn).Params(
			jen.Id("in").Op("*").Add(in),
			jen.Id("out").Op("*").Add(out),
			jen.Id("s").Qual(conversionPkg, "Scope"),
		).Error().Block(body...)
	}
	var b bytes.Buffer
	err := f.Render(&b)
	return b.Bytes(), err
}

// typeCode is the type named alias.typ as code of the spoke v.
func typeCode(v *model.Version, hubs []*model.Version, pkgAlias, typ string) jen.Code {
	if pkgAlias == alias(v) {
		return jen.Id(typ)
	}
	for _, h := range hubs {
		if alias(h) == pkgAlias {
			return jen.Qual(h.ImportPath, typ)
		}
	}
	return jen.Id(typ)
}

func named(n *need) []string {
	var out []string
	for _, f := range n.fields {
		if f != "" {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		out = append(out, n.typ)
	}
	return out
}

func fieldsText(n *need) string {
	var out []string
	for i, f := range n.fields {
		if f == "" {
			f = n.typ
		}
		out = append(out, f+" ("+n.reasons[i]+")")
	}
	return strings.Join(out, "; ")
}
