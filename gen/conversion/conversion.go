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
//
// # Packages that name their peers
//
// A package of the run whose doc.go sets +k8s:conversion-gen is converted
// as conversion-gen converts it, CRD kinds or not: a component config, an
// aggregated API's types (+kubebuilder:skip), an internal version. Its
// tags say what its peers are, and --conversion-extra-peer-dirs adds the
// peers the project's build passes; conversion-gen runs once per API
// group, as projects' Makefiles run it. The peers' types are read in full
// (FullTypes) from the run's load.
//
// # Round-trip tests
//
// A spoke that opgen converts gets a round-trip test when the module
// requires opgen (the test runs on opgen's pkg/conversiontest) and opgen
// wrote the whole conversion: under --strict, or when the spoke has no
// hand-written Convert_ function. A hand-written function may lose a
// field on purpose, which a round trip cannot know; the project's own
// tests cover it, and adopted projects keep passing them.
package conversion

import (
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/opgen-sdk/opgen/gen/internal/universe"
	"github.com/opgen-sdk/opgen/gen/model"
	convargs "k8s.io/code-generator/cmd/conversion-gen/args"
	"sigs.k8s.io/controller-tools/pkg/loader"

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
	// peers are the import paths of the packages conversion-gen reads
	// besides the spokes and hubs (peerPaths).
	peers []string
	// prepared is conversion-gen's input from the run's load, or nil with
	// the reason in fallback.
	prepared *prepared
	fallback string
}

var (
	_ gen.Generator  = (*Generator)(nil)
	_ gen.Preparer   = (*Generator)(nil)
	_ gen.Concurrent = (*Generator)(nil)
	_ gen.FullTyper  = (*Generator)(nil)
)

// Concurrent marks the generator as independent of the shared packages
// once prepared.
func (*Generator) Concurrent() {}

// spoke is one package conversion-gen writes the conversions of: a spoke
// of the API's conversions, with the hub packages of its kinds, or a
// package that sets +k8s:conversion-gen tags itself (tagged), whose peers
// its tags name.
type spoke struct {
	version *model.Version
	hubs    []*model.Version
	tagged  bool
	// tag is where a tagged spoke's doc.go sets conversion-gen's tag.
	tag token.Position
}

// conversionTag is conversion-gen's tag; externalTypesTag names the
// package of the types a package converts, when they live elsewhere.
const (
	conversionTag    = "k8s:conversion-gen"
	externalTypesTag = "k8s:conversion-gen-external-types"
)

// FullTypes names the packages conversion-gen reads types of besides the
// API packages: the peers the tagged packages name, the extra peer
// directories and conversion-gen's base peers (apimachinery's meta/v1,
// conversion and runtime), whose types it matches by name.
func (g *Generator) FullTypes(ctx *gen.Context, api *model.API) []string {
	var paths []string
	for _, root := range ctx.Roots {
		paths = append(paths, universe.PackageTag(ctx.Fset, root, conversionTag)...)
		paths = append(paths, universe.PackageTag(ctx.Fset, root, externalTypesTag)...)
	}
	if len(paths) == 0 && !api.HasVersionedKinds() {
		return nil
	}
	paths = append(paths, ctx.Project.ConversionExtraPeerDirs...)
	return append(paths, convargs.DefaultBasePeerDirs...)
}

// Prepare type-checks the spokes and hubs and takes from them what
// Generate needs: their fields, the user's conversion functions and
// conversion-gen's universe.
func (g *Generator) Prepare(ctx *gen.Context) error {
	g.spokes = append(spokesOf(ctx.API), taggedOf(ctx)...)
	g.spokes = slices.DeleteFunc(g.spokes, func(s *spoke) bool { return !s.tagged && tagged(g.spokes, s.version.ImportPath) })
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
	g.peers = peerPaths(ctx, g.spokes)
	g.prepared, g.fallback = prepareUniverse(ctx, g.spokes, g.peers, g.drops)
	return nil
}

// Generate runs conversion-gen on every spoke package.
func (g *Generator) Generate(ctx *gen.Context) error {
	ctx.OwnInPackages(FileName, ctx.Project.ConversionDirs)
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
		if g.skipsUnconverted(ctx, s, needs) {
			continue
		}
		g.checkFunctions(ctx, s, needs)
		if !s.tagged {
			src = append(src, localSchemeBuilder(s.version)...)
		}
		ctx.Output.Go(filepath.Join(s.version.Dir, FileName), src)
		if g.testsRoundTrips(ctx, s) {
			roundTripTest(ctx, s, g.drops)
		}
	}
	return nil
}

// skipsUnconverted reports whether tagged spoke s is left alone, with a
// warning: its conversions need functions nobody wrote (conversion-gen's
// output would not build) and the package has no conversion file, so the
// project's scripts do not run conversion-gen on it (they name the
// packages they convert, opgen follows the tags). --strict writes it,
// with stubs of the functions, and fails until they are written.
func (g *Generator) skipsUnconverted(ctx *gen.Context, s *spoke, needs []*need) bool {
	if !s.tagged || ctx.Project.StrictConversion {
		return false
	}
	if _, err := os.Stat(filepath.Join(s.version.Dir, FileName)); err == nil {
		return false
	}
	var fns []string
	for _, n := range needs {
		if _, ok := g.user[s.version.ImportPath].funcs[n.fn]; !ok {
			fns = append(fns, n.fn)
		}
	}
	if len(fns) == 0 {
		return false
	}
	rel, _ := filepath.Rel(ctx.Project.Root, s.version.Dir)
	ctx.Warnings.Add(s.tag, "%s has no %s and its conversions need %d function(s) nobody wrote (%s), so opgen leaves it alone as the project's conversion-gen calls do: remove the tag, or name the packages to convert with --conversion-packages, or write the functions (opgen generate --strict writes stubs of them)", rel, FileName, len(fns), strings.Join(fns, ", "))
	return true
}

// testsRoundTrips reports whether spoke s gets a round-trip test: opgen
// planned its conversion, the module requires opgen, whose test kit runs
// the test, and opgen wrote the whole conversion (--strict, or no
// hand-written Convert_ function in the spoke).
func (g *Generator) testsRoundTrips(ctx *gen.Context, s *spoke) bool {
	if s.tagged || !ctx.Project.UsesOpgen {
		return false
	}
	if ctx.Project.StrictConversion {
		return true
	}
	for _, fn := range g.user[s.version.ImportPath].funcs {
		if fn.stub == "" {
			return false
		}
	}
	return true
}

// run runs conversion-gen on the universe from the run's load, or on
// gengo's own load when that universe could not be built.
func (g *Generator) run(ctx *gen.Context) (map[string][]byte, error) {
	extra := ctx.Project.ConversionExtraPeerDirs
	if g.prepared != nil {
		staged, err := runPrepared(g.spokes, extra, g.prepared)
		if err == nil {
			return staged, nil
		}
		g.fallback = err.Error()
	}
	ctx.Note("conversion: conversion-gen loads the API packages itself: " + g.fallback)
	return runLoaded(ctx.Project.Root, g.spokes, g.peers, extra, g.drops)
}

// tagged reports whether the package at path is a tagged spoke: its own
// tags win over the API's plan.
func tagged(spokes []*spoke, path string) bool {
	return slices.ContainsFunc(spokes, func(s *spoke) bool { return s.tagged && s.version.ImportPath == path })
}

// taggedOf returns the packages of the run whose doc.go sets
// +k8s:conversion-gen (conversion-gen reads its package tags there), by
// import path: the API's versions, and other packages (a component
// config, an internal version) as versions of their own. A package with
// the tag on types only converts nothing by itself (conversion-gen
// generates nothing for it): it is a spoke only when the API plans one.
func taggedOf(ctx *gen.Context) []*spoke {
	var out []*spoke
	for _, root := range ctx.Roots {
		if len(root.GoFiles) == 0 || !selected(ctx.Project.ConversionDirs, root) {
			continue
		}
		pos, ok := universe.PackageTagPos(ctx.Fset, root, conversionTag)
		if !ok {
			continue
		}
		v := ctx.API.VersionFor(root)
		if v == nil {
			v = model.PackageVersion(ctx.Fset, root)
		}
		out = append(out, &spoke{version: v, tagged: true, tag: pos})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version.ImportPath < out[j].version.ImportPath })
	return out
}

// selected reports whether the package directories dirs (a run's
// --conversion-packages) select root; nil selects every package.
func selected(dirs map[string]bool, root *loader.Package) bool {
	return dirs == nil || dirs[filepath.Dir(root.GoFiles[0])]
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
