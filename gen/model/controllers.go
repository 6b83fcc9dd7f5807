package model

// What +opgen:controller and +opgen:webhook markers configure: the
// controllers of the project's kinds and the admission webhooks. The
// handler types of built-in kinds are in builtins.go.

import (
	"fmt"
	"go/token"
	"go/types"
	"strings"

	"sigs.k8s.io/controller-tools/pkg/loader"
	ctmarkers "sigs.k8s.io/controller-tools/pkg/markers"

	"github.com/opgen-sdk/opgen/gen/markers"
)

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
	} else if msg := markers.Renamed(markers.Name(l.Text)); msg != "" {
		b.in.Warnings.Add(l.Pos, "%s", msg)
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
