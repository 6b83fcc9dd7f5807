package conversion

import (
	"errors"
	"fmt"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"unsafe"

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

// conversion-gen reads three inputs: the spokes, whose conversions it
// writes; their peers, the hubs; and its base peer packages
// (apimachinery's meta/v1, conversion and runtime), where it looks for
// the conversion functions it may call. On its own it loads them with
// gengo's parser, which type-checks every package they import, function
// bodies included, from source: seconds on a small project.
//
// The run has loaded and type-checked the spokes and hubs already, so
// prepareUniverse builds conversion-gen's universe from that load (as
// the client generator does) and adds the Convert_ functions of the
// spokes, hubs and base peers from their syntax: the run's type checker
// follows only what type declarations reference, so the signatures'
// types are named from the source, as gengo names them. A parser that
// takes those packages as loaded already then keeps conversion-gen from
// loading them again.
//
// When the universe cannot be built that way to give conversion-gen what
// its own load would (see fallbackReason), the generator uses gengo's
// load, which is slow but always right.

const convertPrefix = "Convert_"

// prepared is conversion-gen's input, built from the run's load.
type prepared struct {
	universe types.Universe
	// loaded are the packages the parser takes as loaded, by path, with
	// their names.
	loaded map[string]string
}

// prepareUniverse builds conversion-gen's universe from the run's load;
// it returns a reason instead when only gengo's own load gives
// conversion-gen what it expects.
func prepareUniverse(ctx *gen.Context, spokes []*spoke, drops map[field]token.Position) (*prepared, string) {
	var pkgs []*loader.Package
	seen := map[*loader.Package]bool{}
	for _, s := range spokes {
		for _, v := range append([]*model.Version{s.version}, s.hubs...) {
			if !seen[v.Package] {
				seen[v.Package] = true
				pkgs = append(pkgs, v.Package)
			}
		}
	}
	peers, reason := basePeers(pkgs)
	if reason != "" {
		return nil, reason
	}
	if reason := fallbackReason(ctx.Fset, spokes, peers); reason != "" {
		return nil, reason
	}
	b, err := universe.NewBuilder(ctx.Fset, pkgs)
	if err != nil {
		return nil, err.Error()
	}
	loaded := map[string]string{}
	for _, p := range append(slices.Clone(pkgs), peers...) {
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

// basePeers finds conversion-gen's base peer packages among what pkgs
// import.
func basePeers(pkgs []*loader.Package) ([]*loader.Package, string) {
	found := map[string]*loader.Package{}
	seen := map[*loader.Package]bool{}
	var visit func(p *loader.Package)
	visit = func(p *loader.Package) {
		if seen[p] {
			return
		}
		seen[p] = true
		if slices.Contains(convargs.DefaultBasePeerDirs, p.PkgPath) {
			found[p.PkgPath] = p
		}
		for _, imp := range p.Imports() {
			visit(imp)
		}
	}
	for _, p := range pkgs {
		visit(p)
	}
	var out []*loader.Package
	for _, path := range convargs.DefaultBasePeerDirs {
		if found[path] == nil {
			return nil, "the API packages do not import " + path
		}
		out = append(out, found[path])
	}
	return out, ""
}

// fallbackReason says why conversion-gen needs gengo's load: a spoke
// package sets conversion-gen tags of its own, which may name packages
// the run did not prepare; or a spoke type that its hubs lack has the
// name of a type of a base peer, which conversion-gen then takes as its
// peer, and which only gengo's load walks in full.
func fallbackReason(fset *token.FileSet, spokes []*spoke, peers []*loader.Package) string {
	peerTypes := map[string]string{}
	for _, p := range peers {
		for name := range universe.TypeNames(p) {
			peerTypes[name] = p.PkgPath
		}
	}
	for _, s := range spokes {
		if hasConversionTags(fset, s.version.Package) {
			return s.version.ImportPath + " sets +k8s:conversion-gen tags"
		}
		hubTypes := map[string]bool{}
		for _, h := range s.hubs {
			for name := range universe.TypeNames(h.Package) {
				hubTypes[name] = true
			}
		}
		for name := range universe.TypeNames(s.version.Package) {
			if path, ok := peerTypes[name]; ok && !hubTypes[name] {
				return fmt.Sprintf("%s.%s has no peer in its hub but has one in %s", s.version.ImportPath, name, path)
			}
		}
	}
	return ""
}

// hasConversionTags reports whether a package's doc.go, where gengo
// reads package tags, carries a +k8s:conversion-gen tag.
func hasConversionTags(fset *token.FileSet, p *loader.Package) bool {
	for _, f := range p.Syntax {
		if filepath.Base(fset.Position(f.Package).Filename) != "doc.go" {
			continue
		}
		for _, c := range f.Comments {
			for _, line := range strings.Split(c.Text(), "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "+k8s:conversion-gen") {
					return true
				}
			}
		}
	}
	return false
}

// tagSpokes makes each spoke's hubs its peers, as the tag
// +k8s:conversion-gen=<hub> in its doc.go would.
func tagSpokes(u types.Universe, spokes []*spoke) {
	for _, s := range spokes {
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
func runPrepared(spokes []*spoke, p *prepared) (map[string][]byte, error) {
	parser, err := loadedParser(p.loaded)
	if err != nil {
		return nil, err
	}
	c, err := generator.NewContext(parser, convgen.NameSystems(), convgen.DefaultNameSystem())
	if err != nil {
		return nil, fmt.Errorf("conversion-gen: %w", err)
	}
	c.Universe = p.universe
	return execute(c, spokes)
}

// runLoaded runs conversion-gen on gengo's own load of the spokes, their
// hubs and the base peers.
func runLoaded(root string, spokes []*spoke, drops map[field]token.Position) (map[string][]byte, error) {
	args := convargs.New()
	var patterns []string
	for _, s := range spokes {
		patterns = append(patterns, s.version.ImportPath)
		for _, h := range s.hubs {
			patterns = append(patterns, h.ImportPath)
		}
	}
	patterns = append(patterns, args.BasePeerDirs...)
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
	return execute(c, spokes)
}

// execute runs conversion-gen's targets for the spokes of c, one API
// group at a time, as projects run it (one invocation per group in their
// Makefiles). In one invocation the hand-written functions of every input
// package share one table: a spoke may call a function another spoke of
// its group declares, and two packages that each declare one for the
// same pair of types stop conversion-gen ("duplicate static conversion
// defined"). A group that does is run one package at a time.
func execute(c *generator.Context, spokes []*spoke) (map[string][]byte, error) {
	out := map[string][]byte{}
	c.FileTypes = map[string]generator.FileType{generator.GoFileType: capture(out)}
	for _, group := range byGroup(spokes) {
		err := executeInputs(c, group)
		if errors.Is(err, errDuplicate) {
			for _, s := range group {
				if err = executeInputs(c, []*spoke{s}); err != nil {
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
// invocation. conversion-gen panics on two hand-written functions for one
// pair of types; that panic is errDuplicate.
func executeInputs(c *generator.Context, spokes []*spoke) (err error) {
	args := convargs.New()
	args.OutputFile = FileName
	c.Inputs = nil
	for _, s := range spokes {
		c.Inputs = append(c.Inputs, s.version.ImportPath)
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

// loadedParser returns a gengo parser that takes the packages of loaded
// as loaded already. conversion-gen's GetTargets asks its parser to load
// the peer packages into the universe; this parser finds them loaded and
// adds nothing, so conversion-gen works on the universe as given.
//
// gengo has no API for it: the parser records what it loaded in two
// unexported maps, which are filled through reflection. Should a gengo
// release change them, loadedParser fails (and a test with it) and the
// generator falls back to gengo's load.
func loadedParser(loaded map[string]string) (*gengoparser.Parser, error) {
	p := gengoparser.NewWithOptions(gengoparser.Options{BuildTags: []string{convargs.New().GeneratedBuildTag}})
	v := reflect.ValueOf(p).Elem()
	pkgs, err := parserMap[map[string]*packages.Package](v, "goPkgs")
	if err != nil {
		return nil, err
	}
	done, err := parserMap[map[string]bool](v, "fullyProcessed")
	if err != nil {
		return nil, err
	}
	for path, name := range loaded {
		pkgs[path] = &packages.Package{ID: path, PkgPath: path, Name: name}
		done[path] = true
	}
	return p, nil
}

// parserMap returns the map held by the unexported field name of v.
func parserMap[M any](v reflect.Value, name string) (M, error) {
	var zero M
	f := v.FieldByName(name)
	if !f.IsValid() || f.Type() != reflect.TypeFor[M]() || f.IsNil() {
		return zero, fmt.Errorf("gengo's parser has no map %s of type %v", name, reflect.TypeFor[M]())
	}
	return *(*M)(unsafe.Pointer(f.UnsafeAddr())), nil
}

// quietKlog silences conversion-gen's klog lines: what they say about
// fields it cannot convert, the run reports with positions. It must be
// called before the concurrent generators run: it sets klog's logger,
// which they read.
func quietKlog() {
	klog.SetLogger(logr.Discard())
}

// capture assembles gengo's files into out, by package path.
type capture map[string][]byte

func (c capture) AssembleFile(f *generator.File, _ string) error {
	src, err := universe.Assemble(f)
	c[f.PackagePath] = src
	return err
}
