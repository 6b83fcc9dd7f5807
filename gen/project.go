package gen

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/opgen-sdk/opgen/gen/model"
	"golang.org/x/mod/modfile"
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
	return o, nil
}

// Project is the project a run works on: its root, its module and the
// directories its patterns select.
type Project struct {
	Options
	// ModuleDir and ModulePath are the enclosing module's root and path.
	ModuleDir, ModulePath string
	// Dirs are the absolute package directories the patterns select,
	// sorted, found the way the go command does (skipping testdata,
	// vendor, directories starting with . or _ and nested modules).
	Dirs []string
	// sources are the source files of each of Dirs, as NewProject found
	// them: the stamp's check of a no-op run reads no directory again.
	sources map[string][]string
}

// NewProject resolves opts into a Project.
func NewProject(opts Options) (*Project, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Project{Options: opts}
	if p.ModuleDir, p.ModulePath, err = findModule(opts.Root); err != nil {
		return nil, err
	}
	if p.Name == "" {
		p.Name = NameOf(p.ImportPath(p.Root))
	}
	if p.Dirs, p.sources, err = expandPatterns(opts.Root, opts.Patterns); err != nil {
		return nil, err
	}
	p.selectControllerPackage()
	return p, nil
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

func findModule(dir string) (string, string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			mod := modfile.ModulePath(data)
			if mod == "" {
				return "", "", fmt.Errorf("%s: no module line; run `go mod init`", filepath.Join(d, "go.mod"))
			}
			return d, mod, nil
		}
		if filepath.Dir(d) == d {
			return "", "", fmt.Errorf("%s is not inside a Go module: run opgen from a directory under a go.mod (go mod init)", dir)
		}
	}
}

// expandPatterns turns relative package patterns into directories that
// hold Go files, and returns the source files of each (sorted). It reads
// each directory once: a no-op run over 200 kinds walks about 700.
func expandPatterns(root string, patterns []string) ([]string, map[string][]string, error) {
	sources := map[string][]string{}
	add := func(dir string, entries []fs.DirEntry) {
		for _, e := range entries {
			if !e.IsDir() && isSourceFile(e.Name()) {
				sources[dir] = append(sources[dir], filepath.Join(dir, e.Name()))
			}
		}
	}
	var walk func(dir string, entries []fs.DirEntry) error
	walk = func(dir string, entries []fs.DirEntry) error {
		add(dir, entries)
		for _, e := range entries {
			if !e.IsDir() || skipName(e.Name()) {
				continue
			}
			sub := filepath.Join(dir, e.Name())
			subEntries, err := os.ReadDir(sub)
			if err != nil {
				return err
			}
			if slices.ContainsFunc(subEntries, func(e fs.DirEntry) bool { return e.Name() == "go.mod" && !e.IsDir() }) {
				continue // a nested module
			}
			if err := walk(sub, subEntries); err != nil {
				return err
			}
		}
		return nil
	}
	for _, pat := range patterns {
		if !strings.HasPrefix(pat, ".") && !filepath.IsAbs(pat) {
			return nil, nil, fmt.Errorf("package pattern %q is not relative to the project root: write it like ./apis/... or ./apis/v1", pat)
		}
		recursive := strings.HasSuffix(pat, "/...")
		dir := filepath.Join(root, strings.TrimSuffix(pat, "/..."))
		if pat == "..." {
			dir, recursive = root, true
		}
		if _, done := sources[dir]; done {
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("package pattern %q: %s is not a directory", pat, dir)
		}
		if !recursive {
			add(dir, entries)
			continue
		}
		if err := walk(dir, entries); err != nil {
			return nil, nil, err
		}
	}
	dirs := make([]string, 0, len(sources))
	for d := range sources {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return dirs, sources, nil
}

// skipName reports whether the go command skips a directory of this name
// in a ./... pattern.
func skipName(name string) bool {
	return name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

func hasGoFiles(dir string) bool {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if isSourceFile(e.Name()) {
			return true
		}
	}
	return false
}

// isSourceFile reports whether name is a non-test Go file.
func isSourceFile(name string) bool {
	return strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_")
}

// ClientTrees are the directories under ClientDir that the client
// generator writes and owns whole.
var ClientTrees = []string{"clientset/versioned", "listers", "informers/externalversions", "applyconfiguration"}

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
	for _, tree := range ClientTrees {
		t := p.Abs(filepath.Join(p.ClientDir, tree))
		if dir == t || strings.HasPrefix(dir, t+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// ClientsetPackage is the import path of the generated clientset.
func (p *Project) ClientsetPackage() string {
	return p.ImportPath(filepath.Join(p.ClientDir, "clientset", "versioned"))
}

// InformersPackage is the import path of the generated informers of v.
// Like code-generator, it follows the API directories (apis/<dir>/<version>),
// which need not match the group's first label.
func (p *Project) InformersPackage(v *model.Version) string {
	return p.ImportPath(filepath.Join(p.ClientDir, "informers", "externalversions", v.GroupDir(), v.Name))
}

// ApplyConfigurationsPackage is the import path of the generated apply
// configurations of v; it follows the API directories too.
func (p *Project) ApplyConfigurationsPackage(v *model.Version) string {
	return p.ImportPath(filepath.Join(p.ClientDir, "applyconfiguration", v.GroupDir(), v.Name))
}
