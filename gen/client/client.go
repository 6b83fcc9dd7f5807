// Package client generates the typed clientset (with its fake), listers,
// informers and apply configurations of the project's kinds, in the
// conventional layout under pkg/generated:
//
//	clientset/versioned             the clientset, and fake/ for tests
//	listers/<group>/<version>       listers
//	informers/externalversions      the informer factory and informers
//	applyconfiguration              apply configurations for server-side apply
//
// It drives k8s.io/code-generator's client-gen, lister-gen, informer-gen
// and applyconfiguration-gen as Go packages, in process, on gengo
// universes. The universe is not parsed by gengo: it is built (package
// gen/internal/universe) from the packages the run already loaded and
// type-checked with controller-tools, so the whole run loads the code once.
// The conventional way parses the packages four times more, in four
// processes, each type-checking every dependency from source.
//
// # Tags come from kubebuilder markers, or are the user's
//
// Before the code-generator targets run, the generator sets client-gen's
// tags on the parsed types from the API model. In a package whose kinds
// carry +genclient (code-generator's style), those kinds get clients with
// their tags as written (nonNamespaced, noStatus, onlyVerbs, skipVerbs,
// method=...). Otherwise every root kind with a list type gets +genclient,
// with +genclient:noStatus when there is no
// +kubebuilder:subresource:status. Either way the client's scope is the
// CRD's (+genclient:nonNamespaced exactly when the CRD is cluster-scoped),
// and +groupName and +groupGoName reach the package comments from
// whichever file declares them.
// Plural exceptions make the client's names follow the CRD's plural
// (+kubebuilder:resource:path).
//
// # Concurrency
//
// Prepare type-checks the API packages and builds two universes in the
// runner's goroutine; Generate then runs in parallel with the
// controller-tools generators, and its four generators in two lanes side
// by side: applyconfiguration-gen on one universe, the three others on
// the other (gengo's generators add to the universe they run on).
package client

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/opgen-sdk/opgen/gen/model"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"

	applyargs "k8s.io/code-generator/cmd/applyconfiguration-gen/args"
	applygen "k8s.io/code-generator/cmd/applyconfiguration-gen/generators"
	clientargs "k8s.io/code-generator/cmd/client-gen/args"
	clientgen "k8s.io/code-generator/cmd/client-gen/generators"
	clienttypes "k8s.io/code-generator/cmd/client-gen/types"
	informerargs "k8s.io/code-generator/cmd/informer-gen/args"
	informergen "k8s.io/code-generator/cmd/informer-gen/generators"
	listerargs "k8s.io/code-generator/cmd/lister-gen/args"
	listergen "k8s.io/code-generator/cmd/lister-gen/generators"
	"k8s.io/gengo/v2/generator"
	"k8s.io/gengo/v2/namer"
	"k8s.io/gengo/v2/types"
	"sigs.k8s.io/controller-tools/pkg/loader"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/internal/universe"
)

// apisPkg holds apis.Status, which statuses embed; its apply configuration
// is opgen's, in apis/applyconfiguration.
const apisPkg = "github.com/opgen-sdk/opgen/apis"

// Generator writes the clients, with the tags the API model implies. Use a
// new one for every run.
type Generator struct {
	gen.NoMarkers
	// universes are one per lane of Generate.
	universes [2]types.Universe
	inputs    []string
	err       error
	// tooOld says why the module cannot build the clients (oldClientGo).
	tooOld string
}

var (
	_ gen.Generator  = (*Generator)(nil)
	_ gen.Preparer   = (*Generator)(nil)
	_ gen.Concurrent = (*Generator)(nil)
)

// Concurrent marks the generator as independent of the shared packages
// once prepared.
func (*Generator) Concurrent() {}

// WritesClients says that the run writes clients.
func (*Generator) WritesClients() {}

// Prepare type-checks the API packages and builds gengo's universe from
// them, with the tags the markers imply.
func (g *Generator) Prepare(ctx *gen.Context) error {
	if g.tooOld = oldClientGo(ctx.Project); g.tooOld != "" {
		return nil
	}
	var pkgs []*loader.Package
	for _, v := range ctx.API.ClientVersions() {
		pkgs = append(pkgs, v.Package)
	}
	if len(pkgs) == 0 {
		return nil
	}
	for _, p := range pkgs {
		ctx.Checker.Check(p)
		g.inputs = append(g.inputs, p.PkgPath)
	}
	sort.Strings(g.inputs)
	for i := range g.universes {
		if g.universes[i], g.err = universe.New(ctx.Fset, pkgs); g.err != nil {
			return g.err
		}
		if g.err = injectTags(g.universes[i], ctx.API, ctx.Project.Clients.Kinds == gen.ClientsGenclient); g.err != nil {
			return g.err
		}
	}
	return nil
}

// Generate runs the four code-generator generators.
func (g *Generator) Generate(ctx *gen.Context) error {
	p := ctx.Project
	if g.tooOld != "" && len(ctx.API.ClientVersions()) > 0 {
		const orKeep = "or keep generating them with your code-generator (opgen generate --clients=none)"
		ctx.Warnings.Add(ctx.API.ClientVersions()[0].Pos, "%s; opgen left the clients as they are: to generate them, run go get %s, %s", g.tooOld, upgrade, orKeep)
		return nil
	}
	// Own the four trees, not the client directory: it may hold others.
	for _, dir := range p.ClientOutputs() {
		ctx.Output.Own(p.Abs(dir))
	}
	versions := ctx.API.ClientVersions()
	if len(versions) == 0 || g.universes[0] == nil {
		return g.err
	}
	stage, err := os.MkdirTemp("", "opgen-client-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	lane := func(u types.Universe) *runner {
		base := &generator.Context{Universe: u, Inputs: g.inputs}
		return &runner{base: base, out: ctx.Output, stage: stage, root: p.Root}
	}
	apply, clients := lane(g.universes[0]), lane(g.universes[1])
	exceptions := pluralExceptions(ctx.API, p.Clients)
	var applyErr error
	var wg sync.WaitGroup
	if p.WritesClientTree(gen.ApplyConfigTree) {
		wg.Go(func() { applyErr = apply.applyConfigurations(p) })
	}
	if p.WritesClientTree(gen.ClientsetTree) {
		err = clients.clientset(p, versions, exceptions)
	}
	if err == nil && p.WritesClientTree(gen.ListersTree) {
		err = clients.listers(p, exceptions)
	}
	if err == nil && p.WritesClientTree(gen.InformersTree) {
		err = clients.informers(p, exceptions)
	}
	wg.Wait()
	return errors.Join(err, applyErr)
}

// codeGenerator is the module whose generators write the clients.
const codeGenerator = "k8s.io/code-generator"

// upgrade is the go get that gives a module the client libraries the
// clients opgen writes need.
var upgrade = func() string {
	v := builtVersion(codeGenerator, "v0.37.2")
	return "k8s.io/client-go@" + v + " k8s.io/api@" + v + " k8s.io/apimachinery@" + v
}()

// oldClientGo says why the module of p cannot build the clients
// code-generator writes, or "": they use the client-go of its own minor
// release (discovery.DiscoveryInterfaces, say), and the module requires
// an older one.
func oldClientGo(p *gen.Project) string {
	data, err := os.ReadFile(filepath.Join(p.ModuleDir, "go.mod"))
	if err != nil {
		return ""
	}
	f, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil {
		return ""
	}
	need := semver.MajorMinor(builtVersion(codeGenerator, "v0.37.2"))
	for _, r := range f.Require {
		if (r.Mod.Path == "k8s.io/client-go" || r.Mod.Path == "k8s.io/apimachinery") && semver.Compare(semver.MajorMinor(r.Mod.Version), need) < 0 {
			return fmt.Sprintf("the clients opgen writes (code-generator %s) need %s %s or newer, and go.mod requires %s", need, r.Mod.Path, need, r.Mod.String())
		}
	}
	return ""
}

// builtVersion is the version of module that opgen was built with, or def
// when the build does not say (a test binary may not).
func builtVersion(module, def string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == module && semver.IsValid(d.Version) {
				return d.Version
			}
		}
	}
	return def
}

// injectTags gives client-gen the tags of the API model: the group's
// +groupName and +groupGoName, whichever file declares them, and, unless
// asTagged (the types keep the tags they have, as client-gen reads
// them), for each kind with a client either its own +genclient tags, as
// written, or those its kubebuilder markers imply.
func injectTags(u types.Universe, api *model.API, asTagged bool) error {
	for _, v := range api.ClientVersions() {
		pkg := u[v.ImportPath]
		if pkg == nil {
			return fmt.Errorf("gengo did not load %s", v.ImportPath)
		}
		pkg.Comments = append(withoutTag(withoutTag(pkg.Comments, "+groupName"), "+groupGoName"), "+groupName="+v.Group.Name)
		if v.Group.GoNameOverride != "" {
			pkg.Comments = append(pkg.Comments, "+groupGoName="+v.Group.GoNameOverride)
		}
		if asTagged {
			continue
		}
		for _, k := range v.Kinds {
			t := pkg.Types[k.Name]
			if t == nil {
				return fmt.Errorf("gengo did not load %s.%s", v.ImportPath, k.Name)
			}
			t.CommentLines = withoutTag(t.CommentLines, "+genclient")
			t.SecondClosestCommentLines = withoutTag(t.SecondClosestCommentLines, "+genclient")
			if k.Client {
				t.CommentLines = append(t.CommentLines, clientTags(k)...)
			}
		}
	}
	return nil
}

// clientTags are the +genclient tags of k: its own, as client-gen reads
// them (a +genclient:nonNamespaced that its CRD's scope contradicts is
// the model's warning), or those its markers imply, with the scope of its
// CRD.
func clientTags(k *model.Kind) []string {
	if len(k.ClientTags) > 0 {
		return k.ClientTags
	}
	tags := []string{"+genclient"}
	if !k.StatusSubresource {
		tags = append(tags, "+genclient:noStatus")
	}
	if !k.Namespaced {
		tags = append(tags, "+genclient:nonNamespaced")
	}
	return tags
}

// withoutTag drops the lines that set tag, so that the injected tags are
// the only ones.
func withoutTag(lines []string, tag string) []string {
	return slices.DeleteFunc(slices.Clone(lines), func(l string) bool {
		l = strings.TrimSpace(l)
		return l == tag || strings.HasPrefix(l, tag+"=") || strings.HasPrefix(l, tag+":")
	})
}

// pluralExceptions are the plurals of the generated names: the user's
// (client-gen's --plural-exceptions), and, unless the clients follow
// client-gen's selection (ClientsGenclient), each kind's CRD plural.
func pluralExceptions(api *model.API, opts gen.ClientOptions) map[string]string {
	out := map[string]string{}
	if opts.Kinds != gen.ClientsGenclient {
		for _, k := range api.Kinds() {
			out[k.Name] = k.GoPlural()
		}
	}
	for _, e := range opts.PluralExceptions {
		typ, plural, _ := strings.Cut(e, ":")
		out[typ] = plural
	}
	return out
}

func exceptionList(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+":"+v)
	}
	slices.Sort(out)
	return out
}

// runner executes code-generator targets on copies of one base context,
// staging their files.
type runner struct {
	base        *generator.Context
	out         *gen.Output
	stage, root string
}

func (r *runner) execute(systems namer.NameSystems, defaultSystem string, targets func(*generator.Context) []generator.Target) error {
	c := *r.base
	c.Namers = namer.NameSystems{}
	for name, n := range systems {
		c.Namers[name] = n
	}
	orderer := namer.Orderer{Namer: systems[defaultSystem]}
	c.Order = r.ownTypes(orderer.OrderUniverse(c.Universe))
	c.FileTypes = map[string]generator.FileType{generator.GoFileType: stagingFileType{out: r.out, realPath: r.realPath}}
	var staged []generator.Target
	for _, t := range targets(&c) {
		staged = append(staged, stagedTarget{Target: t, dir: r.stagePath(t.Dir())})
	}
	return c.ExecuteTargets(staged)
}

// ownTypes keeps the types of the input packages, in order. Every target
// generates for the types of one input package (or of all), so the
// others, which the universe holds because the inputs refer to them,
// only cost each target a pass of its filter over them.
func (r *runner) ownTypes(order []*types.Type) []*types.Type {
	inputs := map[string]bool{}
	for _, in := range r.base.Inputs {
		inputs[in] = true
	}
	out := order[:0:0]
	for _, t := range order {
		if inputs[t.Name.Package] {
			out = append(out, t)
		}
	}
	return out
}

// stagePath maps a real output directory into the staging directory, so
// that gengo's MkdirAll touches nothing of the project.
func (r *runner) stagePath(dir string) string {
	rel, err := filepath.Rel(r.root, dir)
	if err != nil {
		rel = dir
	}
	return filepath.Join(r.stage, rel)
}

func (r *runner) realPath(staged string) string {
	rel, _ := filepath.Rel(r.stage, staged)
	return filepath.Join(r.root, rel)
}

type stagedTarget struct {
	generator.Target
	dir string
}

func (t stagedTarget) Dir() string { return t.dir }

// stagingFileType assembles gengo's files into the run's Output, at the
// real path of each staged one.
type stagingFileType struct {
	out      *gen.Output
	realPath func(staged string) string
}

func (s stagingFileType) AssembleFile(f *generator.File, pathname string) error {
	src, err := universe.Assemble(f)
	if err == nil {
		s.out.Go(s.realPath(pathname), src)
	}
	return err
}

// output is the directory and the import path of a client tree.
func output(p *gen.Project, tree string) (string, string) {
	rel := p.ClientTreeDir(tree)
	return p.Abs(rel), p.ImportPath(rel)
}

func (r *runner) clientset(p *gen.Project, versions []*model.Version, exceptions map[string]string) error {
	args := clientargs.New()
	args.OutputDir, args.OutputPkg = output(p, gen.ClientsetTree)
	args.ClientsetName = cmp.Or(p.Clients.VersionedName, "versioned")
	if p.WritesClientTree(gen.ApplyConfigTree) {
		_, args.ApplyConfigurationPackage = output(p, gen.ApplyConfigTree)
	}
	args.PluralExceptions = exceptionList(exceptions)
	args.PrefersProtobuf = p.Clients.PrefersProtobuf
	byGroup := map[string]*clienttypes.GroupVersions{}
	for _, v := range versions {
		gv := byGroup[v.Group.Name]
		if gv == nil {
			gv = &clienttypes.GroupVersions{PackageName: v.GroupDir(), Group: clienttypes.Group(v.Group.Name)}
			byGroup[v.Group.Name] = gv
		}
		gv.Versions = append(gv.Versions, clienttypes.PackageVersion{Version: clienttypes.Version(v.Name), Package: v.ImportPath})
	}
	for _, v := range versions {
		if gv := byGroup[v.Group.Name]; gv != nil {
			args.Groups = append(args.Groups, *gv)
			delete(byGroup, v.Group.Name)
		}
	}
	return r.execute(clientgen.NameSystems(exceptions), clientgen.DefaultNameSystem(), func(c *generator.Context) []generator.Target {
		return clientgen.GetTargets(c, args)
	})
}

func (r *runner) listers(p *gen.Project, exceptions map[string]string) error {
	args := listerargs.New()
	args.OutputDir, args.OutputPkg = output(p, gen.ListersTree)
	args.PluralExceptions = exceptionList(exceptions)
	return r.execute(listergen.NameSystems(exceptions), listergen.DefaultNameSystem(), func(c *generator.Context) []generator.Target {
		return listergen.GetTargets(c, args)
	})
}

func (r *runner) informers(p *gen.Project, exceptions map[string]string) error {
	args := informerargs.New()
	args.OutputDir, args.OutputPkg = output(p, gen.InformersTree)
	args.VersionedClientSetPackage = p.ClientsetPackage()
	_, args.ListersPackage = output(p, gen.ListersTree)
	args.PluralExceptions = exceptionList(exceptions)
	return r.execute(informergen.NameSystems(exceptions), informergen.DefaultNameSystem(), func(c *generator.Context) []generator.Target {
		return informergen.GetTargets(c, args)
	})
}

func (r *runner) applyConfigurations(p *gen.Project) error {
	args := applyargs.New()
	args.ExternalApplyConfigurations[types.Name{Package: apisPkg, Name: "Status"}] = apisPkg + "/applyconfiguration"
	for _, e := range p.Clients.ApplyConfigExternals {
		typ, pkg, _ := strings.Cut(e, ":")
		at := strings.LastIndex(typ, ".")
		args.ExternalApplyConfigurations[types.Name{Package: typ[:at], Name: typ[at+1:]}] = pkg
	}
	if p.Clients.ApplyConfigOpenAPISchema != "" {
		args.OpenAPISchemaFilePath = p.Abs(p.Clients.ApplyConfigOpenAPISchema)
	}
	args.OutputDir, args.OutputPkg = output(p, gen.ApplyConfigTree)
	return r.execute(applygen.NameSystems(), applygen.DefaultNameSystem(), func(c *generator.Context) []generator.Target {
		return applygen.GetTargets(c, args)
	})
}
