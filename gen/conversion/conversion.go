// Package conversion generates the typed conversion of every spoke version
// of a kind to and from its hub (the version marked
// +kubebuilder:storageversion), for the kinds whose served versions differ
// (model.API.Conversions).
//
// It drives k8s.io/code-generator's conversion-gen as a Go package, in
// process, with the hub's package as the peer of every spoke: the tag
// +k8s:conversion-gen=<hub import path> is set on the spoke's package in
// gengo's universe, so the user writes no tag. The universe is built from
// the run's load (gengo.go), not from a parse of its own. conversion-gen
// writes zz_generated.conversion.go in the spoke, field by field for every
// field whose name and type match in both versions, with
// RegisterConversions, which it registers in the spoke's SchemeBuilder:
// the spoke's AddToScheme then adds the conversions to a scheme.
//
// # What it cannot convert
//
// A field that has no counterpart of the same name and type in the other
// version needs a hand-written Convert_<from>_<Type>_To_<to>_<Type>
// function in the spoke package, which conversion-gen then calls. For each
// one missing, the run fails, naming each field with its position, and:
//
//   - when the spoke has no conversion.go, writes it, once, with a stub of
//     every missing function; this stub is all the failing run writes. The
//     stub converts the other fields and returns the error "conversion of
//     field <Name> not written", so that no object is converted with the
//     field silently lost;
//   - otherwise, shows the function's signature, until the function exists
//     and its body no longer returns the stub's error: a function is
//     recognised as the stub when a string literal in its body begins
//     "conversion of field " and ends " not written".
//
// A field marked +opgen:conversion:drop is lost on purpose: it needs no
// function (conversion-gen skips it, as with +k8s:conversion-gen=false)
// and the round-trip test leaves it out.
package conversion

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/opgen-sdk/opgen/gen/model"

	"github.com/opgen-sdk/opgen/gen"
	opgenmarkers "github.com/opgen-sdk/opgen/gen/markers"
)

// FileName is the generated file of each spoke; StubFile is the user's
// file of hand-written conversions, written once.
const (
	FileName = "zz_generated.conversion.go"
	StubFile = model.ConversionStubFile
	// ExtraStubFile holds the stubs of a later run, once StubFile exists.
	ExtraStubFile = "conversion_stubs.go"
	// DropMarker marks a field that a conversion loses on purpose.
	DropMarker = "+" + opgenmarkers.ConversionDrop
)

// Generator writes the conversions. It reads the drop marker from the
// field comments (see DropMarker). Use a new one for every run.
type Generator struct {
	gen.NoMarkers
	spokes []*spoke
	// drops are the fields marked DropMarker; fields are where the fields
	// of the spokes and hubs are declared.
	drops, fields map[field]token.Position
	// user are the conversion functions of each spoke, by import path.
	user map[string]userFuncs
	// prepared is conversion-gen's input from the run's load, or nil with
	// the reason in fallback.
	prepared *prepared
	fallback string
}

var (
	_ gen.Generator  = (*Generator)(nil)
	_ gen.Preparer   = (*Generator)(nil)
	_ gen.Concurrent = (*Generator)(nil)
)

// Concurrent marks the generator as independent of the shared packages
// once prepared.
func (*Generator) Concurrent() {}

// spoke is one spoke package and the hub packages of its kinds.
type spoke struct {
	version *model.Version
	hubs    []*model.Version
}

// Prepare type-checks the spokes and hubs and takes from them what
// Generate needs: their fields, the user's conversion functions and
// conversion-gen's universe.
func (g *Generator) Prepare(ctx *gen.Context) error {
	g.spokes = spokesOf(ctx.API)
	if len(g.spokes) == 0 {
		return nil
	}
	quietKlog()
	var versions []*model.Version
	for _, s := range g.spokes {
		for _, v := range append([]*model.Version{s.version}, s.hubs...) {
			if !slices.Contains(versions, v) {
				versions = append(versions, v)
				ctx.Checker.Check(v.Package)
			}
		}
	}
	g.drops, g.fields = fieldsOf(ctx, versions)
	g.user = map[string]userFuncs{}
	for _, s := range g.spokes {
		g.user[s.version.ImportPath] = userFunctions(ctx, s.version)
	}
	g.prepared, g.fallback = prepareUniverse(ctx, g.spokes, g.drops)
	return nil
}

// Generate runs conversion-gen on every spoke package.
func (g *Generator) Generate(ctx *gen.Context) error {
	ctx.OwnInEveryPackage(FileName)
	ctx.OwnInEveryPackage(TestFileName)
	writeGlue(ctx)
	if len(g.spokes) == 0 {
		return nil
	}
	staged, err := g.run(ctx)
	if err != nil {
		return err
	}
	for _, s := range g.spokes {
		src := staged[s.version.ImportPath]
		if src == nil {
			continue
		}
		needs := missing(src)
		needs = append(needs, undefinedCalls(src, g.user[s.version.ImportPath], needs)...)
		g.checkFunctions(ctx, s, needs)
		src = append(src, localSchemeBuilder(s.version)...)
		ctx.Output.Go(filepath.Join(s.version.Dir, FileName), src)
		roundTripTest(ctx, s, g.drops)
	}
	return nil
}

// run runs conversion-gen on the universe from the run's load, or on
// gengo's own load when that universe could not be built.
func (g *Generator) run(ctx *gen.Context) (map[string][]byte, error) {
	if g.prepared != nil {
		staged, err := runPrepared(g.spokes, g.prepared)
		if err == nil {
			return staged, nil
		}
		g.fallback = err.Error()
	}
	ctx.Note("conversion: conversion-gen loads the API packages itself: " + g.fallback)
	return runLoaded(ctx.Project.Root, g.spokes, g.drops)
}

// spokesOf returns the spoke packages of the API's conversions, by
// import path, each with its hubs.
func spokesOf(api *model.API) []*spoke {
	by := map[string]*spoke{}
	for _, c := range api.Conversions {
		if c.Convertible {
			continue // the kind's own methods convert it
		}
		for _, k := range c.Spokes {
			s := by[k.Version.ImportPath]
			if s == nil {
				s = &spoke{version: k.Version}
				by[k.Version.ImportPath] = s
			}
			if !slices.Contains(s.hubs, c.Hub.Version) {
				s.hubs = append(s.hubs, c.Hub.Version)
			}
		}
	}
	var out []*spoke
	for _, s := range by {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version.ImportPath < out[j].version.ImportPath })
	return out
}

// field is a struct field of an API package.
type field struct {
	pkg, typ, name string
}

// fieldsOf returns where the fields of versions are declared, and the
// fields marked DropMarker, at the marker.
func fieldsOf(ctx *gen.Context, versions []*model.Version) (drops, fields map[field]token.Position) {
	drops, fields = map[field]token.Position{}, map[field]token.Position{}
	for _, v := range versions {
		eachField(v, func(typ string, f *ast.Field, name *ast.Ident) {
			key := field{v.ImportPath, typ, name.Name}
			fields[key] = ctx.Position(name.Pos())
			if f.Doc == nil {
				return
			}
			for _, c := range f.Doc.List {
				if strings.TrimSpace(strings.TrimPrefix(c.Text, "//")) == DropMarker {
					drops[key] = ctx.Position(c.Pos())
				}
			}
		})
	}
	return drops, fields
}

// eachField calls fn for every field of every struct type of v. An
// embedded field is named by its type, as Go and conversion-gen name it
// (in.Common for an embedded Common or *pkg.Common).
func eachField(v *model.Version, fn func(typ string, f *ast.Field, name *ast.Ident)) {
	for _, file := range v.Package.Syntax {
		ast.Inspect(file, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			if st, ok := ts.Type.(*ast.StructType); ok {
				for _, f := range st.Fields.List {
					for _, name := range f.Names {
						fn(ts.Name.Name, f, name)
					}
					if name := embeddedName(f); name != nil {
						fn(ts.Name.Name, f, name)
					}
				}
			}
			return false
		})
	}
}

// embeddedName is the name an embedded field goes by (its type's), or nil
// for a named field.
func embeddedName(f *ast.Field) *ast.Ident {
	if len(f.Names) > 0 {
		return nil
	}
	t := f.Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	switch t := t.(type) {
	case *ast.Ident:
		return t
	case *ast.SelectorExpr:
		return t.Sel
	}
	return nil
}
