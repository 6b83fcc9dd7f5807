package gen

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/opgen-sdk/opgen/gen/model"
)

// Default directories of a project, relative to its root.
const (
	DefaultClientDir     = "pkg/generated"
	DefaultControllerDir = "internal/controller"
	DefaultCRDDir        = "config/crd"
	DefaultRBACDir       = "config/rbac"
	DefaultAPIDir        = model.DefaultAPIDir
	DefaultConfigDir     = "config"
	DefaultReleasedDir   = "config/released"
)

// Options configure a run. The zero value of every field but Root has a
// documented default.
type Options struct {
	// Root is the project root: the directory of the //go:generate line.
	// Patterns and every output path are relative to it.
	Root string

	// Patterns select the packages to read, relative to Root, in the go
	// command's form ("./...", "./apis/...", "."). Default: ./...
	Patterns []string

	// Name names the ClusterRole, the leader-election Role, the
	// controllers' field manager and finalizers. Default: NameOf the
	// import path of Root, which is recorded in go.mod and so does not
	// change when the project is copied or cloned into another directory.
	Name string

	// ClientDir is where the clientset, listers, informers and apply
	// configurations go. Default: pkg/generated.
	ClientDir string

	// ControllerDir is the package of the controller glue and stubs.
	// Default: internal/controller.
	ControllerDir string

	// CRDDir and RBACDir hold the manifests. Defaults: config/crd and
	// config/rbac.
	CRDDir, RBACDir string

	// ReleasedDir holds the CRDs of the last release, which `opgen
	// release` writes and the compatibility gate (gen/compat) compares the
	// generated CRDs with. Default: config/released.
	ReleasedDir string

	// BaselineRef, when set, is a git commit, tag or branch whose CRDs
	// (CRDDir at that ref) the compatibility gate compares with instead
	// of ReleasedDir's.
	BaselineRef string

	// AllowDangerousTypes lets API types have float32 and float64 fields,
	// which the CRD generator refuses by default (controller-gen's
	// crd:allowDangerousTypes).
	AllowDangerousTypes bool

	// StrictMarkers makes a +kubebuilder: marker that controller-tools
	// does not know (and so ignores) an error rather than a warning.
	// controller-gen accepts such input, so an adopted project must be
	// accepted too; projects opgen init creates are strict.
	StrictMarkers bool

	// StrictTypes makes a float in a CRD's schema an error unless
	// AllowDangerousTypes; without it, a warning (the CRD takes it as a
	// number). Projects opgen init creates are strict.
	StrictTypes bool

	// CRDPackages, when set, are the package patterns (relative to Root)
	// of the only API packages that get CRDs, as the paths of a project's
	// controller-gen crd call select them; the others keep their deep
	// copies, registration, clients and conversions.
	CRDPackages []string

	// ProjectServesConversions says the project serves the conversions of
	// its kinds that convert themselves as controller-runtime asks (Hub,
	// ConvertTo and ConvertFrom) with controller-runtime's webhook server:
	// a project adopted from kubebuilder, where KubebuilderDefaults sets
	// it. opgen writes neither those CRDs' conversion stanza nor the glue
	// that serves them, even when it runs opgen controllers too; the
	// project's kustomize patches give the CRDs their conversion, as
	// before.
	ProjectServesConversions bool

	// StrictConversion makes opgen generate the conversion of every kind
	// whose versions differ, and fail while a field needs a hand-written
	// function (which it stubs). Without it, a kind the project converts
	// in no way (no Hub and Convertible methods, no Convert_ functions,
	// no conversion.go) gets controller-gen's CRD, without a conversion,
	// and a warning that lists what the versions do not share. Projects
	// opgen init creates are strict.
	StrictConversion bool

	// CRDMaxDescLen, when set, caps every description in the CRD schemas
	// at that many characters, cut at the last sentence end before it,
	// as controller-gen's crd:maxDescLen does: 0 drops them all. A CRD
	// that embeds a pod template can otherwise pass the 256 KiB that a
	// client-side kubectl apply keeps in an annotation. Default: no cap.
	CRDMaxDescLen *int

	// GenerateEmbeddedObjectMeta gives the metadata of the objects a kind
	// embeds (pod templates, job templates) its properties in the CRD
	// schemas: labels, annotations, name, namespace and finalizers, as
	// controller-gen's crd:generateEmbeddedObjectMeta=true does. Without
	// it the API server prunes what is set there.
	GenerateEmbeddedObjectMeta bool

	// IgnoreUnexportedFields leaves unexported fields out of the CRD
	// schemas (crd:ignoreUnexportedFields=true).
	IgnoreUnexportedFields bool

	// IgnoreK8sTags reads Kubernetes' +k8s: validation tags only as
	// controller-gen does (gen/k8stags), so that the CRDs are
	// controller-gen's: the default of a project adopted from kubebuilder
	// (--layout kubebuilder), whose CRDs must not change by adoption.
	IgnoreK8sTags bool

	// HeaderFile is a file, relative to Root, whose text (usually a
	// licence) heads every generated file: Go files as written (a Go
	// comment, like controller-gen's headerFile and code-generator's
	// --go-header-file), YAML files as # comments. " YEAR" in it becomes
	// HeaderYear when that is set, as controller-gen's year option does.
	HeaderFile, HeaderYear string
	// HeaderGoOnly heads the Go files alone with HeaderFile, as
	// kubebuilder's Makefile passes controller-gen's headerFile to its
	// object generator only: the default with --layout kubebuilder, whose
	// manifests must not change by adoption.
	HeaderGoOnly bool

	// Clients configure the typed clients.
	Clients ClientOptions

	// ConversionExtraPeerDirs and DefaulterExtraPeerDirs are the import
	// paths of packages where conversion-gen and defaulter-gen look for
	// hand-written functions besides the input packages and their peers
	// (their --extra-peer-dirs).
	ConversionExtraPeerDirs, DefaulterExtraPeerDirs []string

	// ConversionPackages and DefaulterPackages, when set, are the package
	// patterns (relative to Root) of the only packages whose tags
	// conversion-gen and defaulter-gen follow, as the package arguments
	// of a project's conversion-gen and defaulter-gen calls select them.
	// Unset, every package of the run with the tag is converted or
	// defaulted.
	ConversionPackages, DefaulterPackages []string

	// Force runs even when the stamp says nothing changed.
	Force bool

	// DryRun stages everything and writes nothing; Result.Output holds
	// what a run would write. Golden tests use it.
	DryRun bool

	// StampDir keeps the no-op stamps. Default: the user cache directory's
	// opgen/stamps; "-" disables stamps.
	StampDir string

	// Version identifies the generator build in stamps; the CLI sets it.
	Version string

	// Timings measures the allocation of each stage and generator beside
	// its time (Result.Timings). The generators then run one after
	// another, so that each one's allocation is its own.
	Timings bool
}

func (o Options) withDefaults() (Options, error) {
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return o, fmt.Errorf("project root %q: %w", o.Root, err)
	}
	o.Root = root
	if len(o.Patterns) == 0 {
		o.Patterns = []string{"./..."}
	}
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&o.ClientDir, DefaultClientDir)
	def(&o.ControllerDir, DefaultControllerDir)
	def(&o.CRDDir, DefaultCRDDir)
	def(&o.RBACDir, DefaultRBACDir)
	def(&o.ReleasedDir, DefaultReleasedDir)
	def(&o.Clients.VersionedName, "versioned")
	def(&o.Clients.ClientsetDir, filepath.Join(o.ClientDir, ClientsetTree))
	def(&o.Clients.ListersDir, filepath.Join(o.ClientDir, ListersTree))
	def(&o.Clients.InformersDir, filepath.Join(o.ClientDir, InformersTree))
	def(&o.Clients.ApplyConfigDir, filepath.Join(o.ClientDir, ApplyConfigTree))
	return o, o.Clients.check()
}

// OpgenModule is the module path of opgen, whose packages (the runtime,
// apis, the test kit) some generated files import.
const OpgenModule = "github.com/opgen-sdk/opgen"

// Project is the project a run works on: its root, its module and the
// directories its patterns select.
type Project struct {
	Options
	// ModuleDir and ModulePath are the enclosing module's root and path.
	ModuleDir, ModulePath string
	// UsesOpgen says that the module is opgen's or requires it (a
	// require, tool or replace line of go.mod names it). In a module that
	// does not, which runs opgen as it would run controller-gen and
	// code-generator, opgen writes nothing that imports its own packages:
	// they would not build (see UsesOpgen's use in the generators).
	UsesOpgen bool
	// Dirs are the absolute package directories the patterns select,
	// sorted, found the way the go command does (skipping testdata,
	// vendor, directories starting with . or _ and nested modules).
	Dirs []string
	// sources are the source files of each of Dirs, as NewProject found
	// them: the stamp's check of a no-op run reads no directory again.
	sources map[string][]string
	// walk is the lister that found Dirs, for the stamp of a no-op run.
	walk *lister
	// ClientDirs and CRDDirs are the package directories Clients.Packages
	// and CRDPackages select, or nil when they are not set (every API
	// package gets clients, or CRDs).
	ClientDirs, CRDDirs map[string]bool
	// ConversionDirs and DefaulterDirs are the package directories
	// ConversionPackages and DefaulterPackages select, or nil when they
	// are not set.
	ConversionDirs, DefaulterDirs map[string]bool
}

// NewProject resolves opts into a Project.
func NewProject(opts Options) (*Project, error) { return newProject(opts, nil) }

// newProject is NewProject with the directories that the stamp of the
// last run recorded (see dirList).
func newProject(opts Options, prevDirs map[string]dirList) (*Project, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Project{Options: opts}
	if p.ModuleDir, p.ModulePath, err = findModule(opts.Root); err != nil {
		return nil, err
	}
	p.UsesOpgen = usesOpgen(filepath.Join(p.ModuleDir, "go.mod"), p.ModulePath)
	if p.Name == "" {
		p.Name = NameOf(p.ImportPath(p.Root))
	}
	p.walk = &lister{prev: prevDirs, seen: map[string]dirList{}}
	if p.Dirs, p.sources, err = walkPatterns(opts.Root, opts.Patterns, p.walk); err != nil {
		return nil, err
	}
	if p.ClientDirs, err = dirSet(opts.Root, opts.Clients.Packages); err != nil {
		return nil, fmt.Errorf("client packages: %w", err)
	}
	if p.CRDDirs, err = dirSet(opts.Root, opts.CRDPackages); err != nil {
		return nil, fmt.Errorf("CRD packages: %w", err)
	}
	if p.ConversionDirs, err = dirSet(opts.Root, opts.ConversionPackages); err != nil {
		return nil, fmt.Errorf("conversion packages: %w", err)
	}
	if p.DefaulterDirs, err = dirSet(opts.Root, opts.DefaulterPackages); err != nil {
		return nil, fmt.Errorf("defaulter packages: %w", err)
	}
	p.selectControllerPackage()
	return p, nil
}

// dirSet returns the package directories patterns select, or nil when
// there are no patterns.
func dirSet(root string, patterns []string) (map[string]bool, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	dirs, _, err := expandPatterns(root, patterns)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, d := range dirs {
		out[d] = true
	}
	return out, nil
}

// selectControllerPackage adds the controller package to the patterns when
// they leave it out (opgen generate ./apis/...): the run writes its glue,
// which registers the handler types declared there, so it must read them.
func (p *Project) selectControllerPackage() {
	dir := p.Abs(p.ControllerDir)
	if !hasGoFiles(dir) || slices.Contains(p.Dirs, dir) {
		return
	}
	rel, err := filepath.Rel(p.Root, dir)
	if err != nil {
		return
	}
	pattern := filepath.ToSlash(rel)
	if !strings.HasPrefix(pattern, ".") {
		pattern = "./" + pattern
	}
	p.Patterns = append(slices.Clip(p.Patterns), pattern)
	p.Dirs = append(p.Dirs, dir)
	if _, sources, err := expandPatterns(p.Root, []string{pattern}); err == nil {
		p.sources[dir] = sources[dir]
	}
	sort.Strings(p.Dirs)
}

// Abs returns the absolute path of rel, relative to the project root.
func (p *Project) Abs(rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(p.Root, rel)
}

// ImportPath returns the import path of the package in dir.
func (p *Project) ImportPath(dir string) string {
	rel, err := filepath.Rel(p.ModuleDir, p.Abs(dir))
	if err != nil || rel == "." {
		return p.ModulePath
	}
	return path.Join(p.ModulePath, filepath.ToSlash(rel))
}

// NameOf derives an operator's name from an import path: its last element,
// skipping a major version suffix (example.com/hello-operator/v2 gives
// hello-operator), lower-cased, with every character that a DNS label
// does not allow replaced by '-'. For a project at its module's root the
// import path is the module path of go.mod.
func NameOf(importPath string) string {
	elems := strings.Split(importPath, "/")
	last := elems[len(elems)-1]
	if len(elems) > 1 && majorVersion.MatchString(last) {
		last = elems[len(elems)-2]
	}
	name := strings.Trim(notInLabel.ReplaceAllString(strings.ToLower(last), "-"), "-")
	if name == "" {
		return "operator"
	}
	return name
}

var (
	majorVersion = regexp.MustCompile(`^v[0-9]+$`)
	notInLabel   = regexp.MustCompile(`[^a-z0-9-]+`)
)

// ProjectName returns the operator name of the project in dir (NameOf its
// import path), as a run on dir defaults Options.Name.
func ProjectName(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	p := &Project{Options: Options{Root: abs}}
	if p.ModuleDir, p.ModulePath, err = findModule(abs); err != nil {
		return "", err
	}
	return NameOf(p.ImportPath(abs)), nil
}

// WritesClientTree reports whether the run writes a client tree
// (ClientsetTree, ...).
func (p *Project) WritesClientTree(tree string) bool { return p.Clients.writes(tree) }

// ClientTreeDir returns the directory of a client tree, relative to Root.
func (p *Project) ClientTreeDir(tree string) string {
	dir := map[string]string{
		ClientsetTree:   p.Clients.ClientsetDir,
		ListersTree:     p.Clients.ListersDir,
		InformersTree:   p.Clients.InformersDir,
		ApplyConfigTree: p.Clients.ApplyConfigDir,
	}[tree]
	if dir == "" {
		return filepath.Join(p.ClientDir, tree)
	}
	return dir
}

// versionedName is the clientset's package name.
func (p *Project) versionedName() string {
	if p.Clients.VersionedName == "" {
		return "versioned"
	}
	return p.Clients.VersionedName
}

// ClientOutputs are the directories, relative to Root, that the client
// generator writes and owns whole: the clientset's package, the listers,
// the informers' externalversions and the apply configurations. Other
// files under the trees' directories are the user's.
func (p *Project) ClientOutputs() []string {
	return []string{
		filepath.Join(p.ClientTreeDir(ClientsetTree), p.versionedName()),
		p.ClientTreeDir(ListersTree),
		filepath.Join(p.ClientTreeDir(InformersTree), "externalversions"),
		p.ClientTreeDir(ApplyConfigTree),
	}
}

// LoadPaths returns the import paths of the packages a run reads: those
// of Dirs, less the client generator's own trees (ClientTrees), whose
// packages are the run's output, not its input (hundreds of packages in
// a large project, which would cost a parse each).
func (p *Project) LoadPaths() []string {
	var out []string
	for _, dir := range p.Dirs {
		if !p.inClientTrees(dir) {
			out = append(out, p.ImportPath(dir))
		}
	}
	return out
}

func (p *Project) inClientTrees(dir string) bool {
	for _, tree := range p.ClientOutputs() {
		t := p.Abs(tree)
		if dir == t || strings.HasPrefix(dir, t+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// ClientsetPackage is the import path of the generated clientset.
func (p *Project) ClientsetPackage() string {
	return p.ImportPath(filepath.Join(p.ClientTreeDir(ClientsetTree), p.versionedName()))
}

// InformersPackage is the import path of the generated informers of v.
// Like code-generator, it follows the API directories (apis/<dir>/<version>),
// which need not match the group's first label.
func (p *Project) InformersPackage(v *model.Version) string {
	return p.ImportPath(filepath.Join(p.ClientTreeDir(InformersTree), "externalversions", v.GroupDir(), v.Name))
}

// ApplyConfigurationsPackage is the import path of the generated apply
// configurations of v; it follows the API directories too.
func (p *Project) ApplyConfigurationsPackage(v *model.Version) string {
	return p.ImportPath(filepath.Join(p.ClientTreeDir(ApplyConfigTree), v.GroupDir(), v.Name))
}
