package gen

// Building the API model from the loaded packages and their markers.
// apicheck.go checks what they say.

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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-tools/pkg/loader"
	ctmarkers "sigs.k8s.io/controller-tools/pkg/markers"

	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"

	"github.com/opgen-sdk/opgen/gen/markers"
)

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
		api.markConversionWebhooks()
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
	k.Skipped = info.Markers.Get("kubebuilder:skipversion") != nil
	return k
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
