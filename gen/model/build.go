package model

// Build and its stages, in the order a package goes through them:
// read.go reads its markers, check.go checks them, controllers.go and
// clients.go read what they configure; then alias.go, check.go,
// controllers.go and conversions.go settle the whole API, and schemas.go
// gives its CRDs.

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-tools/pkg/loader"
	ctmarkers "sigs.k8s.io/controller-tools/pkg/markers"

	"github.com/opgen-sdk/opgen/gen/diag"
	"github.com/opgen-sdk/opgen/gen/k8stags"
)

// apiBuilder derives the API model from the roots, reporting the user's
// mistakes to its input's Errors.
type apiBuilder struct {
	in     Input
	groups map[string]*Group
	gvs    map[schema.GroupVersion]*Version
	// owns remembers where each owned kind was declared, to check it
	// once every kind is known.
	owns []ownsRef
	// handlers are the handler types of built-in kinds found so far.
	builtins []*BuiltinController
	// objects are the root objects of the package being added.
	objects []string
	// skips are the packages without a kind.
	skips []skippedPackage
	// grouped are the packages with a group, kinds or not: the deepcopy
	// generator copies their types.
	grouped []*loader.Package
	// clientOnlys are the packages of API.ClientOnly.
	clientOnlys []*Version
	// noCRD says the package being read is marked +kubebuilder:skip.
	noCRD bool
	// scope is the controller package's declarations (controllerScope).
	scope *types.Scope
	// files are the roots' parsed files, by path (docMarker).
	files map[string]*ast.File
}

type ownsRef struct {
	gvk schema.GroupVersionKind
	pos token.Position
}

// Build derives the API model from in, in three stages that in.Measure
// times: the markers of every root, the type-check of the API packages,
// and the model's own checks and plans (aliases, clashes, webhooks,
// conversions). What it finds wrong goes to in.Errors and in.Warnings.
func Build(in Input) *API {
	if in.Measure == nil {
		in.Measure = func(_ string, f func()) { f() }
	}
	b := &apiBuilder{in: in, groups: map[string]*Group{}, gvs: map[schema.GroupVersion]*Version{}}
	api := &API{projectServesConversions: in.Options.ProjectServesConversions}
	in.Measure("parse and read markers", func() {
		for _, root := range in.Roots {
			b.addPackage(root)
		}
		for _, g := range b.groups {
			sort.Slice(g.Versions, func(i, j int) bool { return g.Versions[i].Name < g.Versions[j].Name })
			api.Groups = append(api.Groups, g)
		}
		sort.Slice(api.Groups, func(i, j int) bool { return api.Groups[i].Name < api.Groups[j].Name })
		sortBuiltinControllers(b.builtins)
		api.BuiltinControllers = b.builtins
		api.ClientOnly = b.clientOnlys
	})
	api.schemas = newSchemaSource(in, api)
	// Every generator works on the API packages' types: check them
	// once, here, so that the time is measured as one stage.
	in.Measure("type-check", func() {
		if in.TypeCheck != nil {
			in.TypeCheck(checkedRoots(in, api), api)
		}
		for _, v := range api.Versions() {
			in.Checker.Check(v.Package)
		}
	})
	in.Measure("model", func() {
		assignAliases(api)
		b.checkFieldTypes(api)
		b.checkKinds(api)
		b.settleProjections(api)
		b.settleWebhooks(api)
		b.settleDeletesNow(api)
		b.planConversions(api)
		api.markConversionWebhooks()
		b.reportSkipped(api)
		if in.Options.IgnoreK8sTags {
			return
		}
		k8stags.Check(in.Collector, in.Fset, api.Packages(), func(pos token.Position, msg string) { in.Warnings.Add(pos, "%s", msg) })
	})
	return api
}

func (b *apiBuilder) addPackage(pkg *loader.Package) {
	p := b.read(pkg)
	b.check(pkg, p)
	if p.controllers {
		b.addBuiltinControllers(pkg, p.lines)
		return
	}
	if p.group != "" {
		b.grouped = append(b.grouped, pkg)
	}
	v := b.version(pkg, p)
	if v == nil {
		return
	}
	b.applyControllerMarkers(v, p.lines)
	b.clients(v, p.lines)
}

// addCollectorError reports the errors of controller-tools' marker
// collector, which come as nested lists of positioned errors.
func (b *apiBuilder) addCollectorError(err error) {
	switch e := err.(type) {
	case nil:
	case loader.ErrList:
		for _, inner := range e {
			b.addCollectorError(inner)
		}
	case loader.PositionedError:
		b.in.Errors.AddLibrary(b.in.Fset.Position(e.Pos), strings.Trim(e.Error(), "[]"))
	default:
		b.in.Errors.AddLibrary(token.Position{}, e.Error())
	}
}

// checkedRoots are the roots the generators type-check: the API packages,
// and the packages that ask for deep copies (the markers the deepcopy
// generator reads).
func checkedRoots(in Input, api *API) []*loader.Package {
	out := api.Packages()
	for _, root := range in.Roots {
		if !slices.Contains(out, root) && asksForDeepCopy(in, root) {
			out = append(out, root)
		}
	}
	return out
}

func asksForDeepCopy(in Input, pkg *loader.Package) bool {
	byNode, err := in.Collector.MarkersInPackage(pkg)
	if err != nil {
		return true
	}
	for _, values := range byNode {
		for _, name := range []string{"kubebuilder:object:generate", "kubebuilder:object:root", "k8s:deepcopy-gen"} {
			if values[name] != nil {
				return true
			}
		}
	}
	return false
}

// Input is what the model is built from: the packages a run loaded, the
// tools that read them, and what the run was asked.
type Input struct {
	// Roots are the loaded packages, with their syntax.
	Roots []*loader.Package
	Fset  *token.FileSet
	// Collector reads the markers, every generator's registered.
	Collector *ctmarkers.Collector
	// Checker type-checks what the model and the CRD parser read types of.
	Checker *loader.TypeChecker
	Options Options
	// Errors and Warnings collect what the model finds, at positions.
	Errors, Warnings *diag.Errors
	// Measure times a stage of Build; nil runs it untimed.
	Measure func(stage string, f func())
	// TypeCheck prepares the type-check of the API packages (checkedRoots)
	// before Build checks them: the run gives their dependencies a lean
	// syntax. Nil prepares nothing.
	TypeCheck func(pkgs []*loader.Package, api *API)
}

// DefaultAPIDir is where a project's API groups live (apis/<group>/<version>),
// unless opgen create api is told otherwise.
const DefaultAPIDir = "apis"

// Options are what the run was asked that changes the model.
type Options struct {
	// ControllerDir is the controller package's directory, as the user
	// gave it (for messages), and ControllerAbs the same, absolute.
	ControllerDir, ControllerAbs string
	// AllowDangerousTypes lets API types have float fields.
	AllowDangerousTypes bool
	// GenerateEmbeddedObjectMeta and IgnoreUnexportedFields are
	// controller-gen's CRD options of those names (gen.Options).
	GenerateEmbeddedObjectMeta, IgnoreUnexportedFields bool
	// IgnoreK8sTags applies no +k8s: tag beyond those controller-tools
	// reads (gen.Options).
	IgnoreK8sTags bool
	// StrictMarkers and StrictConversion refuse what controller-gen
	// accepts but a new project should not have (gen.Options).
	StrictMarkers, StrictConversion bool
	// Checks say which generators' checks of the field types run.
	Checks Checks
	// ClientKinds selects the kinds that get clients: "" or "all" (every
	// kind with a list type, or the +genclient kinds of a package that
	// tags some), "genclient" (as client-gen: the packages with a
	// +genclient line, kinds or not, with their tags as written) or
	// "none".
	ClientKinds string
	// ClientDirs and CRDDirs, when set, are the directories of the only
	// packages that get clients, and CRDs.
	ClientDirs, CRDDirs map[string]bool
	// StrictTypes makes a float in a CRD's schema an error rather than a
	// warning, unless AllowDangerousTypes.
	StrictTypes bool
	// ProjectServesConversions says the project serves its conversions
	// itself (gen.Options).
	ProjectServesConversions bool
}
