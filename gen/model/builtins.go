package model

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-tools/pkg/loader"

	"github.com/opgen-sdk/opgen/gen/diag"
	"github.com/opgen-sdk/opgen/gen/internal/servedkinds"
	"github.com/opgen-sdk/opgen/gen/markers"
	"github.com/opgen-sdk/opgen/internal/builtinkinds"
)

// The controllers of Kubernetes' built-in kinds: handler types of the
// controller package marked +opgen:controller:for=<kind>.

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
	// DeletesNow says the controller package calls plug.DeleteNow with an
	// action of the kind: RBAC keeps delete on its retained kinds.
	DeletesNow bool
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
	if d.spec.NamesOwned {
		b.in.Errors.Add(h.Pos, "%s has +opgen:controller:namesOwned, which puts a rule on the names of a custom kind in its CRD; %s is a built-in kind, whose names opgen does not validate: remove the marker", name, info.Marker)
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

// sortBuiltinControllers sorts them by type name.
func sortBuiltinControllers(hs []*BuiltinController) {
	sort.Slice(hs, func(i, j int) bool { return hs[i].Name < hs[j].Name })
}
