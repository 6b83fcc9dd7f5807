package conversion

import (
	"errors"
	"fmt"
	"go/token"
	"maps"
	"slices"
	"strings"

	"github.com/opgen-sdk/opgen/gen/model"

	"github.com/go-logr/logr"
	"golang.org/x/tools/go/packages"
	convargs "k8s.io/code-generator/cmd/conversion-gen/args"
	convgen "k8s.io/code-generator/cmd/conversion-gen/generators"
	"k8s.io/gengo/v2/generator"
	gengoparser "k8s.io/gengo/v2/parser"
	"k8s.io/gengo/v2/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-tools/pkg/loader"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/internal/universe"
)

// conversion-gen reads its input packages, whose conversions it writes;
// their peers (the hubs of a spoke, or what a tagged package's
// +k8s:conversion-gen names); the extra peer directories; and its base
// peer packages (apimachinery's meta/v1, conversion and runtime), where
// it looks for the conversion functions it may call and whose types it
// matches by name. On its own it loads them with gengo's parser, which
// type-checks every package they import, function bodies included, from
// source: seconds on a small project, twenty on a large one.
//
// The run has loaded and type-checked them already: the API packages,
// and the peers and base peers in full (the generator names them in
// FullTypes, so the run keeps their syntax whole), or loaded since
// (gen.Context.Packages). prepareUniverse builds conversion-gen's universe
// from that load (as the client generator does) and adds the Convert_
// functions of every package from their syntax: the run's type checker
// follows only what type declarations reference, so the signatures' types
// are named from the source, as gengo names them. A parser that takes
// those packages as loaded already then keeps conversion-gen from loading
// them again.
//
// When the universe cannot be built that way, the generator uses gengo's
// load, which is slow but always right.

const convertPrefix = "Convert_"

// prepared is conversion-gen's input, built from the run's load.
type prepared struct {
	universe types.Universe
	// loaded are the packages the parser takes as loaded, by path, with
	// their names.
	loaded map[string]string
}

// peerPaths are the import paths of the packages conversion-gen reads
// besides the spokes and their hubs: the peers and external types the
// tagged spokes name, the extra peer directories and the base peers.
func peerPaths(ctx *gen.Context, spokes []*spoke) []string {
	var paths []string
	for _, s := range spokes {
		if s.tagged {
			paths = append(paths, universe.PackageTag(ctx.Fset, s.version.Package, conversionTag)...)
			paths = append(paths, universe.PackageTag(ctx.Fset, s.version.Package, externalTypesTag)...)
		}
	}
	paths = append(paths, ctx.Project.ConversionExtraPeerDirs...)
	return append(paths, convargs.DefaultBasePeerDirs...)
}

// prepareUniverse builds conversion-gen's universe from the run's load;
// it returns a reason instead when it cannot.
func prepareUniverse(ctx *gen.Context, spokes []*spoke, peerPaths []string, drops map[field]token.Position) (*prepared, string) {
	var pkgs []*loader.Package
	seen := map[*loader.Package]bool{}
	add := func(p *loader.Package) {
		if !seen[p] {
			seen[p] = true
			pkgs = append(pkgs, p)
		}
	}
	for _, s := range spokes {
		for _, v := range append([]*model.Version{s.version}, s.hubs...) {
			add(v.Package)
		}
	}
	peers, err := ctx.Packages(peerPaths)
	if err != nil {
		return nil, err.Error()
	}
	for _, path := range slices.Sorted(maps.Keys(peers)) {
		ctx.Checker.Check(peers[path])
		add(peers[path])
	}
	for _, p := range pkgs {
		if p.Types == nil || p.TypesInfo == nil {
			return nil, p.PkgPath + " could not be type-checked"
		}
	}
	b, err := universe.NewBuilder(ctx.Fset, pkgs)
	if err != nil {
		return nil, err.Error()
	}
	loaded := map[string]string{}
	for _, p := range pkgs {
		if err := b.AddFunctions(p, convertPrefix); err != nil {
			return nil, err.Error()
		}
		loaded[p.PkgPath] = p.Name
	}
	u := b.Universe()
	tagSpokes(u, spokes)
	markDropped(u, drops)
	return &prepared{universe: u, loaded: loaded}, ""
}

// tagSpokes makes each spoke's hubs its peers, as the tag
// +k8s:conversion-gen=<hub> in its doc.go would; a tagged spoke keeps its
// own tags.
func tagSpokes(u types.Universe, spokes []*spoke) {
	for _, s := range spokes {
		if s.tagged {
			continue
		}
		pkg := u.Package(s.version.ImportPath)
		for _, h := range s.hubs {
			pkg.Comments = append(pkg.Comments, "+k8s:conversion-gen="+h.ImportPath)
		}
	}
}

// markDropped gives the dropped fields conversion-gen's opt-out tag.
func markDropped(u types.Universe, drops map[field]token.Position) {
	for f := range drops {
		pkg := u[f.pkg]
		if pkg == nil || pkg.Types[f.typ] == nil {
			continue
		}
		t := pkg.Types[f.typ]
		for i := range t.Members {
			if t.Members[i].Name == f.name {
				t.Members[i].CommentLines = append(t.Members[i].CommentLines, "+k8s:conversion-gen=false")
			}
		}
	}
}

// runPrepared runs conversion-gen on the prepared universe and returns
// the generated file of each spoke, by import path.
func runPrepared(spokes []*spoke, extraPeers []string, p *prepared) (map[string][]byte, error) {
	parser, err := universe.LoadedParser(p.loaded, convargs.New().GeneratedBuildTag)
	if err != nil {
		return nil, err
	}
	c, err := generator.NewContext(parser, convgen.NameSystems(), convgen.DefaultNameSystem())
	if err != nil {
		return nil, fmt.Errorf("conversion-gen: %w", err)
	}
	c.Universe = p.universe
	return execute(c, spokes, extraPeers)
}

// runLoaded runs conversion-gen on gengo's own load of the spokes, their
// hubs and peers (peerPaths).
func runLoaded(root string, spokes []*spoke, peers, extraPeers []string, drops map[field]token.Position) (map[string][]byte, error) {
	args := convargs.New()
	var patterns []string
	for _, s := range spokes {
		patterns = append(patterns, s.version.ImportPath)
		for _, h := range s.hubs {
			patterns = append(patterns, h.ImportPath)
		}
	}
	patterns = append(patterns, peers...)
	p := gengoparser.NewWithOptions(gengoparser.Options{BuildTags: []string{args.GeneratedBuildTag}})
	if err := p.LoadPackagesWithConfigForTesting(&packages.Config{Dir: root, Env: gen.LoadEnv()}, patterns...); err != nil {
		return nil, fmt.Errorf("load the API packages for conversion-gen: %w", err)
	}
	c, err := generator.NewContext(p, convgen.NameSystems(), convgen.DefaultNameSystem())
	if err != nil {
		return nil, fmt.Errorf("conversion-gen: %w", err)
	}
	for _, s := range spokes {
		if c.Universe[s.version.ImportPath] == nil {
			return nil, fmt.Errorf("gengo did not load %s", s.version.ImportPath)
		}
	}
	tagSpokes(c.Universe, spokes)
	markDropped(c.Universe, drops)
	return execute(c, spokes, extraPeers)
}

// execute runs conversion-gen's targets for the spokes of c, one API
// group at a time, as projects run it (one invocation per group in their
// Makefiles). In one invocation the hand-written functions of every input
// package share one table: a spoke may call a function another spoke of
// its group declares, and two packages that each declare one for the same
// pair of types stop conversion-gen ("duplicate static conversion
// defined"). A group that does is run one package at a time.
func execute(c *generator.Context, spokes []*spoke, extraPeers []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	c.FileTypes = map[string]generator.FileType{generator.GoFileType: universe.Capture(out)}
	for _, group := range byGroup(spokes) {
		err := executeInputs(c, group, extraPeers)
		if errors.Is(err, errDuplicate) {
			for _, s := range group {
				if err = executeInputs(c, []*spoke{s}, extraPeers); err != nil {
					break
				}
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

var errDuplicate = errors.New("duplicate static conversion")

// executeInputs runs conversion-gen's targets for spokes in one
// invocation, with the extra peers that are not among them (a package is
// not its own peer). conversion-gen panics on two hand-written functions
// for one pair of types; that panic is errDuplicate.
func executeInputs(c *generator.Context, spokes []*spoke, extraPeers []string) (err error) {
	args := convargs.New()
	args.OutputFile = FileName
	c.Inputs = nil
	for _, s := range spokes {
		c.Inputs = append(c.Inputs, s.version.ImportPath)
	}
	for _, p := range extraPeers {
		if !slices.Contains(c.Inputs, p) {
			args.ExtraPeerDirs = append(args.ExtraPeerDirs, p)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			msg := fmt.Sprint(p)
			if !strings.HasPrefix(msg, "duplicate static conversion") {
				panic(p)
			}
			err = fmt.Errorf("%w: %s", errDuplicate, msg)
		}
	}()
	if err := c.ExecuteTargets(convgen.GetTargets(c, args)); err != nil {
		return fmt.Errorf("conversion-gen: %w", err)
	}
	return nil
}

// byGroup splits spokes by API group, in order.
func byGroup(spokes []*spoke) [][]*spoke {
	var out [][]*spoke
	at := map[string]int{}
	for _, s := range spokes {
		g := s.version.Group.Name
		i, ok := at[g]
		if !ok {
			i = len(out)
			at[g] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], s)
	}
	return out
}

// quietKlog silences conversion-gen's klog lines: what they say about
// fields it cannot convert, the run reports with positions. It must be
// called before the concurrent generators run: it sets klog's logger,
// which they read.
func quietKlog() {
	klog.SetLogger(logr.Discard())
}
