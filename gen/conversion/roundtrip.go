package conversion

import (
	"go/token"
	"path/filepath"
	"sort"

	"github.com/dave/jennifer/jen"

	"github.com/opgen-sdk/opgen/gen"
)

// TestFileName is the generated round-trip test of each spoke.
const TestFileName = "zz_generated.conversion_test.go"

const (
	conversiontestPkg = "github.com/opgen-sdk/opgen/pkg/conversiontest"
	randfillPkg       = "sigs.k8s.io/randfill"
)

// roundTripTest renders the round-trip test of spoke s: one test per kind
// it converts, over random objects in both directions, with the dropped
// fields of s and its hubs kept zero.
func roundTripTest(ctx *gen.Context, s *spoke, drops map[field]token.Position) {
	v := s.version
	f := jen.NewFilePathName(v.ImportPath, v.Package.Name)
	var fills []jen.Code
	for _, d := range sortedDrops(drops, s) {
		typ := jen.Qual(d.pkg, d.typ)
		fills = append(fills, jen.Func().Params(jen.Id("obj").Op("*").Add(typ), jen.Id("c").Qual(randfillPkg, "Continue")).Block(
			jen.Id("c").Dot("FillNoCustom").Call(jen.Id("obj")),
			jen.Qual(conversiontestPkg, "Zero").Call(jen.Op("&").Id("obj").Dot(d.name)),
		))
	}
	for _, c := range ctx.API.Conversions {
		for _, k := range c.Spokes {
			if k.Version != v {
				continue
			}
			args := append([]jen.Code{jen.Id("t"), jen.Id("AddToScheme")}, fills...)
			f.Commentf("Test%sRoundTrip converts random %s objects %s → %s → %s and %s → %s → %s: no field may be lost but those marked +opgen:conversion:drop.", k.Name, k.Name, v.Name, c.Hub.Version.Name, v.Name, c.Hub.Version.Name, v.Name, c.Hub.Version.Name)
			f.Func().Id("Test" + k.Name + "RoundTrip").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
				jen.Qual(conversiontestPkg, "RoundTrip").Types(jen.Op("*").Id(k.Name), jen.Op("*").Qual(c.Hub.Version.ImportPath, k.Name)).Call(args...),
			)
		}
	}
	ctx.Output.Jen(filepath.Join(v.Dir, TestFileName), f)
}

// sortedDrops returns the dropped fields of s and its hubs, in order.
func sortedDrops(drops map[field]token.Position, s *spoke) []field {
	pkgs := map[string]bool{s.version.ImportPath: true}
	for _, h := range s.hubs {
		pkgs[h.ImportPath] = true
	}
	var out []field
	for d := range drops {
		if pkgs[d.pkg] {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.pkg != b.pkg {
			return a.pkg < b.pkg
		}
		if a.typ != b.typ {
			return a.typ < b.typ
		}
		return a.name < b.name
	})
	return out
}
