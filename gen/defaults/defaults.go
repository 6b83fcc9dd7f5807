// Package defaults generates zz_generated.defaults.go in every package of
// the run with a +k8s:defaulter-gen tag (in any file, as kube_codegen.sh
// finds defaulter-gen's inputs): RegisterDefaults and the
// SetObjectDefaults_ functions that call the package's SetDefaults_
// functions and apply its +default tags, as code-generator's
// defaulter-gen writes them.
//
// A package whose types carry +k8s:defaulter-gen=true but whose doc.go
// has no package tag gets the defaulters of those types, as defaulter-gen
// wrote them before v0.37 (v0.37 skips such a package), so that a project
// generated with an older code-generator keeps building.
//
// It drives defaulter-gen as a Go package, in process, on a gengo universe
// built from the run's load (gen/internal/universe), as the conversion
// generator drives conversion-gen: the inputs, the packages their
// +k8s:defaulter-gen-input tags name and the extra peer directories
// (--defaulter-extra-peer-dirs) are read from the load, and a parser that
// takes them as loaded keeps defaulter-gen from loading them again.
package defaults

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	defargs "k8s.io/code-generator/cmd/defaulter-gen/args"
	defgen "k8s.io/code-generator/cmd/defaulter-gen/generators"
	"k8s.io/gengo/v2/generator"
	"k8s.io/gengo/v2/types"
	"sigs.k8s.io/controller-tools/pkg/loader"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/internal/universe"
	"github.com/opgen-sdk/opgen/gen/model"
)

// FileName is the generated file of each input package.
const FileName = "zz_generated.defaults.go"

const (
	defaulterTag = "k8s:defaulter-gen"
	inputTag     = "k8s:defaulter-gen-input"
	// setDefaultsPrefix names the hand-written functions defaulter-gen
	// calls.
	setDefaultsPrefix = "SetDefaults_"
)

// Generator writes the defaulters. Use a new one for every run.
type Generator struct {
	gen.NoMarkers
	// inputs are the tagged packages, by import path, in order.
	inputs []*loader.Package
	// u and loaded are defaulter-gen's universe and the packages it holds
	// (import path to name); err says why they could not be built.
	u      types.Universe
	loaded map[string]string
	err    error
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

// FullTypes names the packages defaulter-gen reads types of besides the
// inputs: those the inputs' +k8s:defaulter-gen-input tags name, and the
// extra peer directories.
func (g *Generator) FullTypes(ctx *gen.Context, _ *model.API) []string {
	var paths []string
	for _, root := range ctx.Roots {
		if universe.Tagged(root, defaulterTag) {
			paths = append(paths, universe.PackageTag(ctx.Fset, root, inputTag)...)
		}
	}
	if len(paths) == 0 && len(g.tagged(ctx)) == 0 {
		return nil
	}
	return append(paths, ctx.Project.DefaulterExtraPeerDirs...)
}

// tagged returns the roots with a +k8s:defaulter-gen tag.
func (g *Generator) tagged(ctx *gen.Context) []*loader.Package {
	var out []*loader.Package
	for _, root := range ctx.Roots {
		if len(root.GoFiles) == 0 {
			continue
		}
		if dirs := ctx.Project.DefaulterDirs; dirs != nil && !dirs[filepath.Dir(root.GoFiles[0])] {
			continue
		}
		if universe.Tagged(root, defaulterTag) {
			out = append(out, root)
		}
	}
	slices.SortFunc(out, func(a, b *loader.Package) int { return strings.Compare(a.PkgPath, b.PkgPath) })
	return out
}

// Prepare finds the tagged packages and builds defaulter-gen's universe
// from the run's load.
func (g *Generator) Prepare(ctx *gen.Context) error {
	g.inputs = g.tagged(ctx)
	if len(g.inputs) == 0 {
		return nil
	}
	var paths []string
	for _, p := range g.inputs {
		paths = append(paths, universe.PackageTag(ctx.Fset, p, inputTag)...)
	}
	peers, err := ctx.Packages(append(paths, ctx.Project.DefaulterExtraPeerDirs...))
	if err != nil {
		g.err = err
		return nil
	}
	pkgs := slices.Clone(g.inputs)
	for _, path := range slices.Sorted(maps.Keys(peers)) {
		if !slices.Contains(pkgs, peers[path]) {
			pkgs = append(pkgs, peers[path])
		}
	}
	for _, p := range pkgs {
		ctx.Checker.Check(p)
		if p.Types == nil || p.TypesInfo == nil {
			g.err = fmt.Errorf("%s could not be type-checked", p.PkgPath)
			return nil
		}
	}
	b, err := universe.NewBuilder(ctx.Fset, pkgs)
	if err != nil {
		g.err = err
		return nil
	}
	g.loaded = map[string]string{}
	for _, p := range pkgs {
		if err := b.AddFunctions(p, setDefaultsPrefix); err != nil {
			g.err = err
			return nil
		}
		g.loaded[p.PkgPath] = p.Name
	}
	g.u = b.Universe()
	for _, p := range g.inputs {
		if !universe.HasPackageTag(ctx.Fset, p, defaulterTag) {
			// Types tagged +k8s:defaulter-gen=true, and no package tag:
			// defaulter-gen before v0.37 defaulted those types, v0.37
			// reads the package tag first. A tag whose value names no
			// field keeps the types' own tags deciding.
			pkg := g.u.Package(p.PkgPath)
			pkg.Comments = append(pkg.Comments, "+"+defaulterTag+"=true")
		}
	}
	return nil
}

// Generate runs defaulter-gen on the tagged packages, in one invocation
// as kube_codegen.sh runs it.
func (g *Generator) Generate(ctx *gen.Context) error {
	ctx.OwnInPackages(FileName, ctx.Project.DefaulterDirs)
	if len(g.inputs) == 0 {
		return nil
	}
	if g.err != nil {
		return fmt.Errorf("defaulter-gen: %w", g.err)
	}
	args := defargs.New()
	args.OutputFile = FileName
	args.ExtraPeerDirs = ctx.Project.DefaulterExtraPeerDirs
	parser, err := universe.LoadedParser(g.loaded, args.GeneratedBuildTag)
	if err != nil {
		return err
	}
	c, err := generator.NewContext(parser, defgen.NameSystems(), defgen.DefaultNameSystem())
	if err != nil {
		return fmt.Errorf("defaulter-gen: %w", err)
	}
	c.Universe = g.u
	out := map[string][]byte{}
	c.FileTypes = map[string]generator.FileType{generator.GoFileType: universe.Capture(out)}
	for _, p := range g.inputs {
		c.Inputs = append(c.Inputs, p.PkgPath)
	}
	if err := c.ExecuteTargets(defgen.GetTargets(c, args)); err != nil {
		return fmt.Errorf("defaulter-gen: %w", err)
	}
	for _, p := range g.inputs {
		if src, ok := out[p.PkgPath]; ok {
			ctx.Output.Go(filepath.Join(filepath.Dir(p.GoFiles[0]), FileName), src)
		}
	}
	return nil
}
