package model

// What +opgen:controller and +opgen:webhook markers configure: the
// controllers of the project's kinds, the handler types of built-in kinds
// in the controller package, and the admission webhooks.

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	ctmarkers "sigs.k8s.io/controller-tools/pkg/markers"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-tools/pkg/loader"

	"github.com/opgen-sdk/opgen/gen/diag"
	"github.com/opgen-sdk/opgen/gen/internal/servedkinds"
	"github.com/opgen-sdk/opgen/gen/markers"
	"github.com/opgen-sdk/opgen/internal/builtinkinds"
)

// BuiltinController is the controller of one of Kubernetes' built-in kinds:
// a type of the controller package marked +opgen:controller:for=<kind>,
// which implements plug.Handler of that kind. The user
// writes the type and its methods; opgen generates its glue and RBAC.
type BuiltinController struct {
	// Name is the type's name; Pos is its name's position.
	Name string
	Pos  token.Position
	// Kind is the built-in kind's entry in package builtinkinds' table.
	Kind builtinkinds.Info
	// Controller is what the +opgen:controller markers of the type say.
	Controller *markers.ControllerSpec
	// HasDelete says the type's method set, as the controller package
	// declares it, has Delete: the handler is meant to be a plug.Deleter.
	HasDelete bool
	// Opaque says the type embeds a type of another package, whose
	// methods opgen does not load: its method set may hold more than
	// opgen sees, Delete included.
	Opaque bool
}

// Deletes reports whether the runtime may keep a finalizer on the kind's
// objects for this handler: when it has Delete, or may have it (Opaque).
// RBAC grants the finalizer's patch then.
func (h *BuiltinController) Deletes() bool { return h.HasDelete || h.Opaque }

// GVK returns the handled kind's group, version and kind.
func (h *BuiltinController) GVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: h.Kind.Group, Version: h.Kind.Version, Kind: h.Kind.Kind}
}

// Alias is the import name generated code gives the package of the
// handled kind's type (corev1, appsv1, rbacv1).
func (h *BuiltinController) Alias() string {
	group := h.Kind.Group
	if group == "" {
		group = "core"
	}
	return strings.SplitN(group, ".", 2)[0] + h.Kind.Version
}

// handlerMethods are the methods of plug.Handler, which every handler
// type must have; Add, Modify (plug.Adder, plug.Modifier) and Delete
// (plug.Deleter) are optional.
var handlerMethods = []string{"Reconcile"}

// isControllerPackage reports whether pkg is the project's controller
// package, where handler types of built-in kinds live.
func (b *apiBuilder) isControllerPackage(pkg *loader.Package) bool {
	return len(pkg.GoFiles) > 0 && filepath.Dir(pkg.GoFiles[0]) == b.in.Options.ControllerAbs
}

// handlerDecl is a type of the controller package with opgen markers.
type handlerDecl struct {
	ts   *ast.TypeSpec
	spec *markers.ControllerSpec
	// first is its first opgen marker; forPos is where its
	// +opgen:controller:for is.
	first  markerLine
	forPos token.Position
}

// addBuiltinControllers reads the +opgen: markers of the controller package: each
// type with +opgen:controller:for is a handler of a built-in kind, and
// every other opgen marker there must be on such a type.
func (b *apiBuilder) addBuiltinControllers(pkg *loader.Package, lines []markerLine) {
	decls := b.handlerDecls(lines)
	if len(decls) == 0 {
		return
	}
	scope := b.controllerScope()
	for _, d := range decls {
		if d.spec.For.Empty() {
			if d.forPos.IsValid() {
				continue // a malformed for=, reported where it is
			}
			b.in.Errors.Add(d.first.Pos, "%s has +%s but no +opgen:controller:for: in the controller package, opgen markers go on handler types of built-in kinds, which name their kind with +opgen:controller:for=v1.Pod (a custom kind takes its markers on its API type)", d.ts.Name.Name, markers.Name(d.first.Text))
			continue
		}
		b.addBuiltinController(scope, d)
	}
}

// handlerDecls applies the opgen markers of the controller package to the
// types they document, in file order, and reports those on no type.
func (b *apiBuilder) handlerDecls(lines []markerLine) []*handlerDecl {
	byType := map[*ast.TypeSpec]*handlerDecl{}
	var out []*handlerDecl
	for _, l := range lines {
		if !strings.HasPrefix(l.Text, markers.Prefix) {
			continue
		}
		name := markers.Name(l.Text)
		switch {
		case !markers.Known(name):
			b.in.Errors.AddErr(&diag.Error{Pos: l.Pos, Msg: markers.Unknown(name).Error()})
			continue
		case markers.IsWebhook(name):
			b.in.Errors.Add(l.Pos, "+%s goes on the API type of a kind of this project (under %s), whose objects the webhook admits; opgen writes the webhook type here in %s for it. Built-in kinds get no opgen admission webhooks", name, DefaultAPIDir, b.in.Options.ControllerDir)
			continue
		case l.Type == nil:
			b.in.Errors.Add(l.Pos, "+%s is not on a type: in the controller package, put it in the doc comment of a handler type with +opgen:controller:for=<[group/]version.Kind>", name)
			continue
		}
		d := byType[l.Type]
		if d == nil {
			d = &handlerDecl{ts: l.Type, spec: &markers.ControllerSpec{}, first: l}
			byType[l.Type] = d
			out = append(out, d)
		}
		if name == forMarker {
			d.forPos = l.Pos
		}
		b.apply(l, d.spec)
	}
	return out
}

// addBuiltinController checks one handler type and adds it to the model.
func (b *apiBuilder) addBuiltinController(scope *types.Scope, d *handlerDecl) {
	name := d.ts.Name.Name
	info, err := b.builtinKind(d.spec.For)
	if err != nil {
		b.in.Errors.Add(d.forPos, "%v", err)
		return
	}
	h := &BuiltinController{Name: name, Pos: b.in.Fset.Position(d.ts.Name.Pos()), Kind: info, Controller: d.spec}
	if d.spec.NamesChildren {
		b.in.Errors.Add(h.Pos, "%s has +opgen:controller:namesChildren, which puts a rule on the names of a custom kind in its CRD; %s is a built-in kind, whose names opgen does not validate: remove the marker", name, info.Marker)
	}
	if d.ts.TypeParams != nil {
		b.in.Errors.Add(h.Pos, "%s has type parameters, but the generated Setup registers a zero %s: declare a type without them (it may embed a generic one)", name, name)
		return
	}
	methods, opaque := methodSet(scope, name)
	h.HasDelete, h.Opaque = methods["Delete"], opaque
	var missing []string
	for _, m := range handlerMethods {
		if !methods[m] {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 && !opaque {
		b.in.Errors.Add(h.Pos, "%s handles %s (+opgen:controller:for) but has no %s method: implement plug.Handler[*%s.%s]: func (h *%s) %s(ctx context.Context, a *plug.Action[*%s.%s]) error (Add and Modify are optional, Delete adds cleanup behind a finalizer)",
			name, info.Marker, orList(missing), h.Alias(), info.Kind, name, missing[0], h.Alias(), info.Kind)
	}
	b.builtins = append(b.builtins, h)
}

// builtinKind returns the table entry of gvk, or an error that suggests
// the closest kind.
func (b *apiBuilder) builtinKind(gvk schema.GroupVersionKind) (builtinkinds.Info, error) {
	if k, ok := builtinkinds.Lookup(gvk.Group, gvk.Version, gvk.Kind); ok {
		return k, nil
	}
	ref := markers.FormatKindRef(gvk)
	switch {
	case b.isProjectGroup(gvk.Group):
		return builtinkinds.Info{}, fmt.Errorf("for=%s names a kind of this project: put +opgen:controller on its API type instead; for= selects a Kubernetes built-in kind", ref)
	case servedKind(gvk):
		return builtinkinds.Info{}, fmt.Errorf("for=%s: opgen has no Kind constructor for the built-in kind %s: register its controller with runtime.Register and a runtime.Kind of your own (go doc github.com/opgen-sdk/opgen/pkg/runtime Kind)", ref, ref)
	}
	hint := ""
	if best := closestBuiltin(gvk); best != "" {
		hint = ": did you mean " + best + "?"
	}
	return builtinkinds.Info{}, fmt.Errorf("for=%s: there is no built-in kind %s%s (opgen generates controllers for the kinds package builtin has: go doc github.com/opgen-sdk/opgen/pkg/runtime/builtin)", ref, ref, hint)
}

// servedKind reports whether Kubernetes serves gvk.
func servedKind(gvk schema.GroupVersionKind) bool {
	kinds, _ := servedkinds.Kinds(gvk.Group, gvk.Version)
	return slices.Contains(kinds, gvk.Kind)
}

func (b *apiBuilder) isProjectGroup(group string) bool {
	for _, v := range b.gvs {
		if v.Group.Name == group {
			return true
		}
	}
	return false
}

// closestBuiltin returns the marker of the built-in kind gvk most likely
// means: one with the same kind name in another group or version, else
// the nearest name.
func closestBuiltin(gvk schema.GroupVersionKind) string {
	best, bestDist := "", 1<<30
	for _, k := range builtinkinds.Builtin {
		if strings.EqualFold(k.Kind, gvk.Kind) {
			return k.Marker
		}
		if d := markers.Distance(strings.ToLower(k.Kind), strings.ToLower(gvk.Kind)); d < bestDist {
			best, bestDist = k.Marker, d
		}
	}
	// A transposition costs 2: allow it in short names (Pdo for Pod).
	if bestDist > max(2, len(gvk.Kind)/2) {
		return ""
	}
	return best
}

func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// declarations type-checks the declarations of pkg on their own: the
// packages it imports stand in as empty ones, so nothing else is loaded or
// checked, and the types from them are invalid. Method sets of the
// package's own types are exact; what comes from other packages is not
// known. Errors are expected and ignored.
func declarations(fset *token.FileSet, pkg *loader.Package) *types.Scope {
	pkg.NeedSyntax()
	stand := map[string]*types.Package{}
	conf := types.Config{
		IgnoreFuncBodies: true,
		Error:            func(error) {},
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if p := stand[path]; p != nil {
				return p, nil
			}
			name := path[strings.LastIndex(path, "/")+1:]
			if imp := pkg.Imports()[path]; imp != nil && imp.Name != "" {
				name = imp.Name
			}
			p := types.NewPackage(path, name)
			p.MarkComplete()
			stand[path] = p
			return p, nil
		}),
	}
	tpkg, _ := conf.Check(pkg.PkgPath, fset, pkg.Syntax, nil)
	return tpkg.Scope()
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// methodSet returns the names of the methods of *name, and whether it may
// have more that come from an embedded type of another package (or
// anything else opgen cannot see).
func methodSet(scope *types.Scope, name string) (map[string]bool, bool) {
	tn, ok := scope.Lookup(name).(*types.TypeName)
	if !ok || tn.IsAlias() {
		return nil, true
	}
	out := map[string]bool{}
	ms := types.NewMethodSet(types.NewPointer(tn.Type()))
	for i := range ms.Len() {
		out[ms.At(i).Obj().Name()] = true
	}
	return out, opaque(tn.Type(), map[types.Type]bool{})
}

// opaque reports whether t's method set may include methods opgen cannot
// see: its underlying type, or a type it embeds, is not known.
func opaque(t types.Type, seen map[types.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch u := t.Underlying().(type) {
	case *types.Struct:
		for i := range u.NumFields() {
			f := u.Field(i)
			if !f.Embedded() {
				continue
			}
			ft := f.Type()
			if p, ok := ft.(*types.Pointer); ok {
				ft = p.Elem()
			}
			if opaque(ft, seen) {
				return true
			}
		}
		return false
	case *types.Basic:
		return u.Kind() == types.Invalid
	default:
		return false
	}
}

// sortBuiltinControllers sorts them by type name.
func sortBuiltinControllers(hs []*BuiltinController) {
	sort.Slice(hs, func(i, j int) bool { return hs[i].Name < hs[j].Name })
}

// settleWebhooks reads, for each kind with a validating webhook, whether
// its webhook type in the controller package has ValidateDelete.
func (b *apiBuilder) settleWebhooks(api *API) {
	for _, k := range api.Webhooks() {
		if !k.Webhook.Validate {
			continue
		}
		scope := b.controllerScope()
		if scope == nil {
			k.Webhook.Opaque = true // not loaded: keep DELETE, failing closed
			continue
		}
		if scope.Lookup(k.WebhookType()) == nil {
			continue // the stub generator writes it in this run, without ValidateDelete
		}
		methods, opaque := methodSet(scope, k.WebhookType())
		k.Webhook.HasValidateDelete, k.Webhook.Opaque = methods["ValidateDelete"], opaque
	}
}

// controllerScope returns the declarations of the controller package, or
// nil when it is not among the run's packages.
func (b *apiBuilder) controllerScope() *types.Scope {
	if b.scope != nil {
		return b.scope
	}
	for _, root := range b.in.Roots {
		if b.isControllerPackage(root) {
			b.scope = declarations(b.in.Fset, root)
			return b.scope
		}
	}
	return nil
}

// applyControllerMarkers parses the opgen markers of v's kinds into their
// controller specs.
func (b *apiBuilder) applyControllerMarkers(v *Version, lines []markerLine) {
	byName := map[string]*Kind{}
	for _, k := range v.Kinds {
		byName[k.Name] = k
	}
	for _, l := range lines {
		name := markers.Name(l.Text)
		if !strings.HasPrefix(l.Text, markers.Prefix) || !markers.Known(name) || markers.ReadByGenerator(name) || l.Type == nil || byName[l.Type.Name.Name] == nil {
			continue
		}
		k := byName[l.Type.Name.Name]
		if markers.IsWebhook(name) {
			b.applyWebhookMarker(l, k)
			continue
		}
		if k.Controller == nil {
			k.Controller = &markers.ControllerSpec{}
		}
		switch name {
		case forMarker:
			b.in.Errors.Add(l.Pos, "%s is a kind of this project: +opgen:controller alone gives it a controller; +%s selects a built-in kind for a handler type in %s", k.Name, name, b.in.Options.ControllerDir)
		case labelSelectorMarker:
			b.in.Errors.Add(l.Pos, "+%s narrows the watch of a built-in kind's handler (+opgen:controller:for); a custom kind's controller watches all its objects", name)
		default:
			b.apply(l, k.Controller)
		}
	}
}

// applyWebhookMarker applies a +opgen:webhook marker of line l to k,
// which it gives admission webhooks without a controller.
func (b *apiBuilder) applyWebhookMarker(l markerLine, k *Kind) {
	def := b.in.Collector.Registry.Lookup(l.Text, ctmarkers.DescribesType)
	if def == nil {
		return // reported by checkOpgenMarkers
	}
	val, err := def.Parse(l.Text)
	if err != nil {
		b.in.Errors.Add(l.Pos, "+%s: %v: the marker takes no value", def.Name, err)
		return
	}
	if k.Webhook == nil {
		k.Webhook = &Webhooks{pos: map[string]token.Position{}}
	}
	if _, again := k.Webhook.pos[def.Name]; !again {
		k.Webhook.pos[def.Name] = l.Pos
	}
	val.(interface{ ApplyToWebhook(*markers.WebhookSpec) }).ApplyToWebhook(&k.Webhook.WebhookSpec)
}

// Markers that only handler types of built-in kinds take.
const (
	forMarker           = "opgen:controller:for"
	labelSelectorMarker = "opgen:controller:labelSelector"
)

// apply applies the marker of line l to spec, reporting a mistake at the
// marker and remembering owned kinds for checkKinds.
func (b *apiBuilder) apply(l markerLine, spec *markers.ControllerSpec) {
	before := len(spec.Owns)
	if err := applyMarker(b.in.Collector.Registry, l.Text, spec); err != nil {
		b.in.Errors.Add(l.Pos, "%v", err)
	}
	for _, gvk := range spec.Owns[before:] {
		b.owns = append(b.owns, ownsRef{gvk: gvk, pos: l.Pos})
	}
}

func applyMarker(reg *ctmarkers.Registry, text string, spec *markers.ControllerSpec) error {
	def := reg.Lookup(text, ctmarkers.DescribesType)
	if def == nil {
		return markers.Unknown(markers.Name(text))
	}
	val, err := def.Parse(text)
	if err != nil {
		hint := ""
		if strings.Contains(err.Error(), "extra arguments") {
			hint = ` (quote a value that holds a comma: +` + def.Name + `="a,b")`
		}
		return fmt.Errorf("+%s: %v%s", def.Name, err, hint)
	}
	a, ok := val.(markers.Applier)
	if !ok {
		return fmt.Errorf("+%s does not configure a controller", def.Name)
	}
	return a.ApplyToController(spec)
}
