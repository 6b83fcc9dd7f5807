package gen

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/gobuffalo/flect"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/gengo/v2/namer"
	gengotypes "k8s.io/gengo/v2/types"
	"sigs.k8s.io/controller-tools/pkg/loader"
	ctmarkers "sigs.k8s.io/controller-tools/pkg/markers"

	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"

	"github.com/opgen-sdk/opgen/gen/internal/apikinds"
	"github.com/opgen-sdk/opgen/gen/markers"
	"github.com/opgen-sdk/opgen/pkg/webhook/hooks"
)

// API is the model of the project's API: its groups, versions, kinds and
// controllers, derived from kubebuilder and opgen markers. Generators work
// from it rather than from the markers.
type API struct {
	// Groups are sorted by name.
	Groups []*Group
	// BuiltinControllers are the controllers of built-in kinds: the types
	// of the controller package marked +opgen:controller:for, sorted by
	// name.
	BuiltinControllers []*BuiltinController
	// Conversions are the kinds whose served versions differ, which the
	// operator converts between (see hub.go), by group and kind.
	Conversions []*Conversion
}

// Group is an API group, declared with +groupName.
type Group struct {
	Name string
	// GoNameOverride is the +groupGoName of its packages, or "".
	GoNameOverride string
	goNamePos      token.Position
	// Versions are sorted by name.
	Versions []*Version
}

// GoName is the group's identifier in generated Go, as client-gen names
// it: its +groupGoName, or its first DNS label, capitalized
// (hello.example.com: Hello).
func (g *Group) GoName() string {
	if g.GoNameOverride != "" {
		return g.GoNameOverride
	}
	return flect.Capitalize(g.ShortName())
}

// ShortName is the first DNS label of the group.
func (g *Group) ShortName() string { return strings.ToLower(strings.SplitN(g.Name, ".", 2)[0]) }

// Version is one package of API types: a group version.
type Version struct {
	Group *Group
	Name  string
	// Package is the Go package; Dir and ImportPath locate it.
	Package    *loader.Package
	Dir        string
	ImportPath string
	// Kinds are the root kinds that are not lists, sorted by name.
	Kinds []*Kind
	// Objects are the names of every root object of the package, the
	// kinds, their lists and other objects (subresources, options),
	// sorted: what a scheme registers.
	Objects []string
	// Pos is where the package declares its group.
	Pos token.Position
	// alias is the import name assignAliases chose.
	alias string
}

// ClientLayout reports whether the package's directory is named after its
// version, as code-generator's client generators need.
func (v *Version) ClientLayout() bool { return filepath.Base(v.Dir) == v.Name }

// GroupVersion returns the version's group and version.
func (v *Version) GroupVersion() schema.GroupVersion {
	return schema.GroupVersion{Group: v.Group.Name, Version: v.Name}
}

// Alias is the import name generated code gives the version's package:
// the group's first DNS label and the version (fixture.opgen.dev/v1:
// fixturev1), unless that is the name of a Kubernetes API package
// (batchv1 for k8s.io/api/batch/v1) or of another group's version; then
// the group's next labels are added until every version of the group has
// a name of its own (batch.tutorial.kubebuilder.io/v1:
// batchtutorialv1). See assignAliases.
func (v *Version) Alias() string {
	if v.alias != "" {
		return v.alias
	}
	// A version outside a model (opgen create api): it stays clear of
	// Kubernetes' packages.
	return freeAlias(strings.Split(v.Group.Name, "."), []*Version{v}, reservedAliases())[0]
}

// Kind is a root kind (+kubebuilder:object:root=true, not a list).
type Kind struct {
	Version *Version
	Name    string
	// Plural and Singular are the lower-case resource names.
	Plural, Singular string
	Namespaced       bool
	// StatusSubresource and ScaleSubresource say which subresources the
	// CRD serves.
	StatusSubresource, ScaleSubresource bool
	// Storage and Unserved say that +kubebuilder:storageversion and
	// +kubebuilder:unservedversion mark the kind: its version is the one
	// stored, or is not served.
	Storage, Unserved bool
	// HasList says whether the kind has a list type (<Kind>List).
	HasList bool
	// Client says whether the kind gets a typed client, lister and
	// informer: in a package whose kinds carry +genclient, the kinds that
	// do; otherwise every kind with a list type.
	Client bool
	// ClientTags are the kind's own +genclient tags, which client-gen
	// reads as written; empty when opgen derives them from the markers.
	ClientTags  []string
	clientVerbs clientTags
	// Controller is what the +opgen:controller markers say, or nil.
	Controller *markers.ControllerSpec
	// Webhook is what the +opgen:webhook markers say, or nil.
	Webhook *Webhooks
	// ConversionWebhook says that the API server converts the kind's
	// versions through the operator's conversion webhook: set by the
	// conversion analysis, read by whatever needs the webhook server
	// (UsesWebhookServer).
	ConversionWebhook bool
	// Spec is the type's declaration; Pos is its name's position.
	Spec *ast.TypeSpec
	Pos  token.Position
}

// Webhooks are a kind's admission webhooks, as its +opgen:webhook markers
// declare them.
type Webhooks struct {
	markers.WebhookSpec
	// HasValidateDelete says the webhook type (WebhookType), as the
	// controller package declares it, has ValidateDelete: it checks
	// deletions (webhook.DeleteValidator).
	HasValidateDelete bool
	// Opaque says the webhook type's method set may hold more than opgen
	// sees, ValidateDelete included: it embeds a type of another package,
	// or the controller package is not among the packages of the run.
	Opaque bool
	// pos are the markers' positions, by marker name.
	pos map[string]token.Position
}

// ValidatesDelete reports whether the validating webhook is registered
// for DELETE: when the webhook type has ValidateDelete, or may have it
// (Opaque). The runtime registers the same from the type itself. A type
// that does not exist yet gets the stub, which has none.
func (w *Webhooks) ValidatesDelete() bool {
	return w.Validate && (w.HasValidateDelete || w.Opaque)
}

// WebhookType is the name of the type that holds the kind's webhook
// methods in the controller package: <Kind>Webhook.
func (k *Kind) WebhookType() string { return k.Name + "Webhook" }

// Pos is where the marker named name (opgen:webhook:validate) is.
func (w *Webhooks) Pos(name string) token.Position { return w.pos[name] }

// GVK returns the kind's group, version and kind.
func (k *Kind) GVK() schema.GroupVersionKind { return k.Version.GroupVersion().WithKind(k.Name) }

// Versions returns every version of every group, in order.
func (a *API) Versions() []*Version {
	var out []*Version
	for _, g := range a.Groups {
		out = append(out, g.Versions...)
	}
	return out
}

// Kinds returns every kind, by group, version and name.
func (a *API) Kinds() []*Kind {
	var out []*Kind
	for _, v := range a.Versions() {
		out = append(out, v.Kinds...)
	}
	return out
}

// Controllers returns the kinds that have a controller, by group, version
// and name.
func (a *API) Controllers() []*Kind {
	return slices.DeleteFunc(a.Kinds(), func(k *Kind) bool { return k.Controller == nil })
}

// HasControllers reports whether the project has any controller: a kind
// marked +opgen:controller or a handler of a built-in kind.
func (a *API) HasControllers() bool {
	return len(a.Controllers()) > 0 || len(a.BuiltinControllers) > 0
}

// Webhooks returns the kinds with admission webhooks
// (+opgen:webhook:validate or +opgen:webhook:default), by group, version
// and name.
func (a *API) Webhooks() []*Kind {
	return slices.DeleteFunc(a.Kinds(), func(k *Kind) bool { return k.Webhook == nil })
}

// UsesWebhookServer reports whether the operator serves webhooks: a kind
// with an admission webhook, or one converted by the conversion webhook.
// The manifests add the webhook Service, port and certificate RBAC then.
func (a *API) UsesWebhookServer() bool {
	for _, k := range a.Kinds() {
		if k.Webhook != nil || k.ConversionWebhook {
			return true
		}
	}
	return false
}

// AdmissionHooks describes the admission webhooks of the kinds to the API
// server, validating before mutating per kind, in the order of Webhooks.
func (a *API) AdmissionHooks() []hooks.Hook {
	var out []hooks.Hook
	for _, k := range a.Webhooks() {
		for _, t := range []struct {
			on bool
			ht hooks.HookType
		}{{k.Webhook.Validate, hooks.Validating}, {k.Webhook.Default, hooks.Mutating}} {
			if t.on {
				out = append(out, hooks.Hook{Type: t.ht, GVK: k.GVK(), Resource: k.Plural, Namespaced: k.Namespaced,
					Delete: t.ht == hooks.Validating && k.Webhook.ValidatesDelete()})
			}
		}
	}
	return out
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
	for _, root := range b.ctx.Roots {
		if b.isControllerPackage(root) {
			b.scope = declarations(b.ctx.Fset, root)
			return b.scope
		}
	}
	return nil
}

// Kind returns the project's kind with gvk, or nil.
func (a *API) Kind(gvk schema.GroupVersionKind) *Kind {
	for _, k := range a.Kinds() {
		if k.GVK() == gvk {
			return k
		}
	}
	return nil
}

// firstPos is where the first version declares its group, or no position
// when there is none.
func (a *API) firstPos() token.Position {
	if vs := a.Versions(); len(vs) > 0 {
		return vs[0].Pos
	}
	return noPos
}

// Packages returns the packages of every version, in order.
func (a *API) Packages() []*loader.Package {
	var out []*loader.Package
	for _, v := range a.Versions() {
		out = append(out, v.Package)
	}
	return out
}

// VersionFor returns the version declared by pkg, or nil.
func (a *API) VersionFor(pkg *loader.Package) *Version {
	for _, v := range a.Versions() {
		if v.Package == pkg {
			return v
		}
	}
	return nil
}

// apiBuilder derives the API model from the roots, reporting the user's
// mistakes to errs.
type apiBuilder struct {
	ctx    *Context
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
	// scope is the controller package's declarations (controllerScope).
	scope *types.Scope
}

type ownsRef struct {
	gvk schema.GroupVersionKind
	pos token.Position
}

func buildAPI(ctx *Context) *API {
	b := &apiBuilder{ctx: ctx, groups: map[string]*Group{}, gvs: map[schema.GroupVersion]*Version{}}
	api := &API{}
	ctx.clock.measure("parse and read markers", func() {
		for _, root := range ctx.Roots {
			b.addPackage(root)
		}
		for _, g := range b.groups {
			sort.Slice(g.Versions, func(i, j int) bool { return g.Versions[i].Name < g.Versions[j].Name })
			api.Groups = append(api.Groups, g)
		}
		sort.Slice(api.Groups, func(i, j int) bool { return api.Groups[i].Name < api.Groups[j].Name })
		sortBuiltinControllers(b.builtins)
		api.BuiltinControllers = b.builtins
	})
	// Every generator works on the API packages' types: check them
	// once, here, so that the time is measured as one stage.
	ctx.clock.measure("type-check", func() {
		leanDependencies(ctx, checkedRoots(ctx, api))
		for _, v := range api.Versions() {
			ctx.Checker.Check(v.Package)
		}
	})
	ctx.clock.measure("model", func() {
		assignAliases(api)
		b.checkKinds(api)
		b.settleWebhooks(api)
		b.planConversions(api)
		b.reportSkipped(api)
	})
	return api
}

func (b *apiBuilder) addPackage(pkg *loader.Package) {
	lines := scanMarkers(b.ctx.Fset, pkg)
	group, groupPos := b.groupName(lines)
	kinds, err := b.rootKinds(pkg, lines)
	b.checkKubebuilderMarkers(pkg)
	// opgen's own marker checks first: they replace the collector's
	// messages about the same lines.
	if b.isControllerPackage(pkg) {
		b.addBuiltinControllers(pkg, lines)
		b.addCollectorError(err)
		return
	}
	b.checkOpgenMarkers(lines, kinds, err == nil)
	b.addCollectorError(err)
	if group == "" {
		b.skipped(pkg, groupPos, lines)
		return
	}
	b.checkFieldTypes(pkg)
	if len(kinds) == 0 {
		// A package of shared types with a group, like a hub: nothing to
		// serve, which the run reports when it finds no kind at all.
		b.skipped(pkg, groupPos, lines)
		return
	}
	v := b.newVersion(pkg, group, groupPos, kinds)
	if v == nil {
		return
	}
	b.setGroupGoName(v.Group, lines)
	v.Objects = b.objects
	sort.Strings(v.Objects)
	b.implyObjectGenerate(pkg)
	for _, k := range kinds {
		k.Version = v
		v.Kinds = append(v.Kinds, k)
	}
	sort.Slice(v.Kinds, func(i, j int) bool { return v.Kinds[i].Name < v.Kinds[j].Name })
	b.applyControllerMarkers(v, lines)
	b.settleClients(v)
}

// groupName returns the package's +groupName, reporting conflicting ones.
func (b *apiBuilder) groupName(lines []markerLine) (string, token.Position) {
	var name string
	var pos token.Position
	for _, l := range lines {
		if !strings.HasPrefix(l.Text, "+groupName=") {
			continue
		}
		value := strings.Trim(strings.TrimPrefix(l.Text, "+groupName="), `"`)
		switch {
		case name == "":
			name, pos = value, l.Pos
		case value != name:
			b.ctx.Errors.Add(l.Pos, "conflicting group names: +groupName=%s here, but +groupName=%s at %s; a package is one group version, so keep one +groupName (in doc.go)", value, name, pos)
		}
	}
	return name, pos
}

func (b *apiBuilder) newVersion(pkg *loader.Package, group string, pos token.Position, kinds map[string]*Kind) *Version {
	dir := filepath.Dir(pkg.GoFiles[0])
	version := pkg.Name
	if pm, err := ctmarkers.PackageMarkers(b.ctx.Collector, pkg); err == nil {
		if vn, ok := pm.Get("versionName").(string); ok && vn != "" {
			version = vn
		}
	}
	if !validVersion(version) {
		b.ctx.Errors.Add(pos, "package %s declares +groupName=%s, so it is the version %q of that group, which is not of the form v1, v1beta1, v2alpha1 that Kubernetes orders versions by and opgen's kind references (group/version.Kind) need: name the package after the version, or add +versionName=v1 beside +groupName", pkg.PkgPath, group, version)
		return nil
	}
	if filepath.Base(dir) != version {
		b.ctx.Warnings.Add(pos, "package %s is the version %s of %s, but its directory is %s: its CRDs, deep copies and registration are generated, but no client, since code-generator's lister, informer and apply configuration generators take the group and version from the last two elements of the import path; to get a client, move the package to a directory <group>/%s", pkg.PkgPath, version, group, filepath.Base(dir), version)
	}
	gv := schema.GroupVersion{Group: group, Version: version}
	if prev := b.gvs[gv]; prev != nil {
		b.reportSharedGroupVersion(prev, gv, pos, kinds)
		return nil
	}
	g := b.groups[group]
	if g == nil {
		g = &Group{Name: group}
		b.groups[group] = g
	}
	v := &Version{Group: g, Name: version, Package: pkg, Dir: dir, ImportPath: pkg.PkgPath, Pos: pos}
	g.Versions = append(g.Versions, v)
	b.gvs[gv] = v
	return v
}

// reportSharedGroupVersion reports a second package for group version gv:
// each kind both declare is a duplicate kind; without one, the packages
// still clash.
func (b *apiBuilder) reportSharedGroupVersion(prev *Version, gv schema.GroupVersion, pos token.Position, kinds map[string]*Kind) {
	dup := false
	for _, k := range prev.Kinds {
		if again := kinds[k.Name]; again != nil {
			dup = true
			b.ctx.Errors.Add(again.Pos, "duplicate kind: %s %s is also declared at %s; declare each kind once per group version (remove one, or move it to another version)", gv, k.Name, k.Pos)
		}
	}
	if !dup {
		b.ctx.Errors.Add(pos, "group version %s is also declared by package %s (%s); put the group version's kinds in one package, or give this package another version", gv, prev.ImportPath, prev.Pos)
	}
}

func validVersion(v string) bool {
	_, err := markers.ParseKindRef(v + ".X")
	return err == nil
}

// rootKinds returns the package's root kinds that are not lists. When a
// marker does not parse, controller-tools drops all markers of the package
// and the error says which.
func (b *apiBuilder) rootKinds(pkg *loader.Package, lines []markerLine) (map[string]*Kind, error) {
	tags := tagsByType(lines)
	kinds := map[string]*Kind{}
	lists := map[string]bool{}
	b.objects = nil
	err := ctmarkers.EachType(b.ctx.Collector, pkg, func(info *ctmarkers.TypeInfo) {
		t := tags[info.RawSpec]
		structural := isStructuralKind(info, t)
		if !isRoot(info, t) && !structural {
			return
		}
		b.objects = append(b.objects, info.Name)
		if !embeds(info, "ObjectMeta", "ListMeta") {
			return // an object that is not a kind: a subresource, options
		}
		if info.Markers.Get("kubebuilder:object:root") == nil && (t == nil || !t.object) {
			// +genclient alone, or the structure alone: the object
			// needs DeepCopyObject all the same.
			b.setTypeMarker(pkg, info.RawSpec, "kubebuilder:object:root", true)
		}
		if isList(info) {
			lists[strings.TrimSuffix(info.Name, "List")] = true
			return
		}
		k := b.newKind(pkg, info)
		b.applyClientTags(pkg, k, info, t)
		if structural {
			b.ctx.Warnings.Add(k.Pos, "%s embeds metav1.TypeMeta and metav1.ObjectMeta but has no +kubebuilder:object:root=true (or +genclient): opgen takes it for a kind, as controller-gen does for its CRD, and also generates its DeepCopyObject, registration and client; add the marker to say so", k.Name)
		}
		kinds[info.Name] = k
	})
	for name, k := range kinds {
		k.HasList = lists[name]
	}
	return kinds, err
}

// embeds reports whether a type embeds a type of another package named one
// of names: ObjectMeta or ListMeta make a kind or a kind's list, rather
// than another object.
func embeds(info *ctmarkers.TypeInfo, names ...string) bool {
	for _, f := range info.Fields {
		if len(f.RawField.Names) > 0 {
			continue
		}
		t := f.RawField.Type
		if star, ok := t.(*ast.StarExpr); ok {
			t = star.X
		}
		if sel, ok := t.(*ast.SelectorExpr); ok && slices.Contains(names, sel.Sel.Name) {
			return true
		}
	}
	return false
}

func isList(info *ctmarkers.TypeInfo) bool {
	if !strings.HasSuffix(info.Name, "List") {
		return false
	}
	for _, f := range info.Fields {
		if f.Name == "Items" {
			return true
		}
	}
	return false
}

func (b *apiBuilder) newKind(pkg *loader.Package, info *ctmarkers.TypeInfo) *Kind {
	k := &Kind{
		Name:       info.Name,
		Plural:     strings.ToLower(flect.Pluralize(info.Name)),
		Singular:   strings.ToLower(info.Name),
		Namespaced: true,
		Spec:       info.RawSpec,
		Pos:        b.ctx.Fset.Position(info.RawSpec.Name.Pos()),
	}
	if r, ok := info.Markers.Get("kubebuilder:resource").(crdmarkers.Resource); ok {
		if r.Path != "" {
			k.Plural = r.Path
		}
		if r.Singular != "" {
			k.Singular = r.Singular
		}
		k.Namespaced = !strings.EqualFold(r.Scope, "Cluster")
	}
	k.StatusSubresource = info.Markers.Get("kubebuilder:subresource:status") != nil
	k.ScaleSubresource = info.Markers.Get("kubebuilder:subresource:scale") != nil
	k.Storage = info.Markers.Get("kubebuilder:storageversion") != nil
	k.Unserved = info.Markers.Get("kubebuilder:unservedversion") != nil
	return k
}

// checkOpgenMarkers reports unknown opgen markers and, when the package's
// markers parsed (so its kinds are known), opgen markers on anything but a
// root kind.
func (b *apiBuilder) checkOpgenMarkers(lines []markerLine, kinds map[string]*Kind, kindsKnown bool) {
	for _, l := range lines {
		if !strings.HasPrefix(l.Text, markers.Prefix) {
			continue
		}
		name := markers.Name(l.Text)
		switch {
		case markers.ReadByGenerator(name):
			// Field or type markers, which gen/conversion and gen/compat read.
		case !markers.Known(name):
			b.ctx.Errors.AddErr(&Error{Pos: l.Pos, Msg: markers.Unknown(name).Error()})
		case !kindsKnown:
		case name == forMarker && l.Type != nil && kinds[l.Type.Name.Name] == nil:
			b.ctx.Errors.Add(l.Pos, "%s has +%s outside the controller package: handler types of built-in kinds live in %s, whose generated glue registers them; move %s there", l.Type.Name.Name, name, b.ctx.Project.ControllerDir, l.Type.Name.Name)
		case l.Type == nil:
			b.ctx.Errors.Add(l.Pos, "+%s is not on a type: put it in the doc comment of a root kind (a type with +kubebuilder:object:root=true)", name)
		case kinds[l.Type.Name.Name] == nil:
			b.ctx.Errors.Add(l.Pos, "%s has +%s but is not a root kind: add +kubebuilder:object:root=true to %s (and declare %sList), or move the marker to the kind's type", l.Type.Name.Name, name, l.Type.Name.Name, l.Type.Name.Name)
		}
	}
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
			b.ctx.Errors.Add(l.Pos, "%s is a kind of this project: +opgen:controller alone gives it a controller; +%s selects a built-in kind for a handler type in %s", k.Name, name, b.ctx.Project.ControllerDir)
		case labelSelectorMarker:
			b.ctx.Errors.Add(l.Pos, "+%s narrows the watch of a built-in kind's handler (+opgen:controller:for); a custom kind's controller watches all its objects", name)
		default:
			b.apply(l, k.Controller)
		}
	}
}

// applyWebhookMarker applies a +opgen:webhook marker of line l to k,
// which it gives admission webhooks without a controller.
func (b *apiBuilder) applyWebhookMarker(l markerLine, k *Kind) {
	def := b.ctx.Collector.Registry.Lookup(l.Text, ctmarkers.DescribesType)
	if def == nil {
		return // reported by checkOpgenMarkers
	}
	val, err := def.Parse(l.Text)
	if err != nil {
		b.ctx.Errors.Add(l.Pos, "+%s: %v: the marker takes no value", def.Name, err)
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
	if err := applyMarker(b.ctx.Collector.Registry, l.Text, spec); err != nil {
		b.ctx.Errors.Add(l.Pos, "%v", err)
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
		b.ctx.Errors.addLibrary(b.ctx.Fset.Position(e.Pos), strings.Trim(e.Error(), "[]"))
	default:
		b.ctx.Errors.addLibrary(noPos, e.Error())
	}
}

// checkKinds reports kinds that clash: the same resource for two kinds of
// a group, a controller on two versions of a kind or two controllers with
// the same kind name, and owns references to kinds that do not exist.
func (b *apiBuilder) checkKinds(api *API) {
	for _, g := range api.Groups {
		byResource := map[string]*Kind{}
		controllerOf := map[string]*Kind{}
		for _, v := range g.Versions {
			for _, k := range v.Kinds {
				if prev := byResource[k.Plural]; prev != nil && prev.Name != k.Name {
					b.ctx.Errors.Add(k.Pos, "duplicate kind: %s and %s (%s) are both served as %s.%s; rename one kind or set +kubebuilder:resource:path to another plural", k.Name, prev.Name, prev.Pos, k.Plural, g.Name)
				}
				byResource[k.Plural] = k
				if k.Controller == nil {
					continue
				}
				if prev := controllerOf[k.Name]; prev != nil && (k.Controller.Dispatch == "" || prev.Controller.Dispatch == "") {
					b.ctx.Errors.Add(k.Pos, "duplicate kind: %s has +opgen:controller markers in %s and in %s (%s); a kind has one controller unless each version's says which objects it handles: add +opgen:controller:dispatch=written (by the version an object was last written in) or +opgen:controller:dispatch=<version> (that version handles all) to the type in every version, or keep the markers on one version (usually the storage version)", k.Name, v.Name, prev.Version.Name, prev.Pos)
				}
				controllerOf[k.Name] = k
			}
		}
	}
	for _, o := range b.owns {
		if err := api.checkOwned(o.gvk); err != nil {
			b.ctx.Errors.Add(o.pos, "%v", err)
		}
	}
	retained := func(name string, pos token.Position, spec *markers.ControllerSpec) {
		for _, gvk := range spec.Retain {
			if !slices.Contains(spec.Owns, gvk) {
				b.ctx.Errors.Add(pos, "%s retains %s (+opgen:controller:retain), which it does not own: add it to +opgen:controller:owns", name, markers.FormatKindRef(gvk))
			}
		}
	}
	for _, h := range api.BuiltinControllers {
		retained(h.Name, h.Pos, h.Controller)
	}
	for _, k := range api.Controllers() {
		retained(k.Name, k.Pos, k.Controller)
		if k.Controller.NamesChildren {
			if _, ok := markers.ChildNameRule(k.Controller.Owns); !ok {
				b.ctx.Warnings.Add(k.Pos, "%s has +opgen:controller:namesChildren, but no kind it owns (owns=) asks more of a name than the DNS subdomain every object's name is, so the CRD gets no rule: remove the marker, or list the owned kind named after the object (v1.Service, v1.Namespace, batch/v1.Job or batch/v1.CronJob ask more)", k.Name)
			}
		}
	}
	names := map[string]*Kind{}
	for _, k := range api.Controllers() {
		if prev := names[k.Name]; prev != nil && prev.Version.Group != k.Version.Group {
			b.ctx.Errors.Add(k.Pos, "duplicate kind: controllers for %s exist in groups %s and %s (%s), and their glue would share names in one controller package; rename one kind", k.Name, k.Version.Group.Name, prev.Version.Group.Name, prev.Pos)
		}
		names[k.Name] = k
	}
}

// Resource returns the plural resource of gvk: the project's own for its
// kinds, the served one for Kubernetes' built-in kinds, and the
// conventional guess for other kinds (custom resources of other projects).
func (a *API) Resource(gvk schema.GroupVersionKind) string {
	if k := a.Kind(gvk); k != nil {
		return k.Plural
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural.Resource
}

// checkOwned reports an owned kind that cannot exist: a kind of the
// project's groups, or of Kubernetes' built-in groups, that is not
// declared there.
func (a *API) checkOwned(gvk schema.GroupVersionKind) error {
	if a.Kind(gvk) != nil {
		return nil
	}
	var known []string
	inGroup := false
	for _, g := range a.Groups {
		if g.Name == gvk.Group {
			inGroup = true
			for _, v := range g.Versions {
				if v.Name == gvk.Version {
					for _, k := range v.Kinds {
						known = append(known, k.Name)
					}
				}
			}
		}
	}
	if builtin, ok := apikinds.Kinds(gvk.Group, gvk.Version); ok {
		inGroup = true
		known = append(known, builtin...)
	}
	if !inGroup {
		return nil // another project's kind: nothing to check it against
	}
	for _, k := range known {
		if k == gvk.Kind {
			return nil
		}
	}
	sort.Strings(known)
	hint := ""
	if best := closest(gvk.Kind, known); best != "" {
		hint = fmt.Sprintf(": did you mean %s?", markers.FormatKindRef(gvk.GroupVersion().WithKind(best)))
	}
	return fmt.Errorf("owns %s: %s has no kind %s%s", markers.FormatKindRef(gvk), gvk.GroupVersion(), gvk.Kind, hint)
}

func closest(name string, candidates []string) string {
	best, bestDist := "", 1<<30
	for _, c := range candidates {
		if d := markers.Distance(strings.ToLower(name), strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist > len(name)/2 {
		return ""
	}
	return best
}

// GoPlural is the kind's plural as generated Go names it: the clientset's
// accessor (Widgets) and the lister's methods. It follows the CRD's plural,
// so +kubebuilder:resource:path reaches the client too.
func (k *Kind) GoPlural() string {
	// client-gen's own plural, when the CRD's is the same word
	// (ReadOnly: ReadOnlies, not Readonlies).
	if p := pluralNamer.Name(&gengotypes.Type{Name: gengotypes.Name{Name: k.Name}}); strings.EqualFold(p, k.Plural) {
		return p
	}
	if lower := strings.ToLower(k.Name); strings.HasPrefix(k.Plural, lower) {
		return k.Name + k.Plural[len(lower):]
	}
	return flect.Capitalize(k.Plural)
}

var pluralNamer = namer.NewPublicPluralNamer(nil)

// ClientGroup is the name of the clientset method that returns the typed
// client of v's group version (FixtureV1).
func (v *Version) ClientGroup() string {
	return v.Group.GoName() + flect.Capitalize(v.Name)
}

// implyObjectGenerate makes an API package behave as if it declared
// +kubebuilder:object:generate=true, which kubebuilder projects write in
// groupversion_info.go: every type of an API package gets deep copies, not
// only the root kinds. An explicit marker, true or false, wins. The value
// is added to the collector's cached markers of the package's first file.
func (b *apiBuilder) implyObjectGenerate(pkg *loader.Package) {
	const name = "kubebuilder:object:generate"
	byNode, err := b.ctx.Collector.MarkersInPackage(pkg)
	if err != nil || len(pkg.Syntax) == 0 {
		return
	}
	for _, f := range pkg.Syntax {
		if byNode[f][name] != nil {
			return
		}
	}
	if byNode[pkg.Syntax[0]] == nil {
		byNode[pkg.Syntax[0]] = ctmarkers.MarkerValues{}
	}
	byNode[pkg.Syntax[0]][name] = []any{true}
}
