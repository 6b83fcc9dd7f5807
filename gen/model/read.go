package model

// Reading a package: its group, its root kinds and the tags they carry,
// and the version they make. code-generator's tags are read as its
// generators read them, so that API types written for code-generator and
// controller-gen (kube_codegen.sh) work unchanged: +genclient selects the
// kinds that get clients and its options pass to client-gen as written;
// +k8s:deepcopy-gen:interfaces=...runtime.Object makes a root object like
// +kubebuilder:object:root; +groupGoName names the group in generated Go.

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gobuffalo/flect"
	clientutil "k8s.io/code-generator/cmd/client-gen/generators/util"
	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"
	"sigs.k8s.io/controller-tools/pkg/loader"
	ctmarkers "sigs.k8s.io/controller-tools/pkg/markers"
)

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
			b.in.Errors.Add(l.Pos, "conflicting group names: +groupName=%s here, but +groupName=%s at %s; a package is one group version, so keep one +groupName (in doc.go)", value, name, pos)
		}
	}
	return name, pos
}

// rootKinds returns the package's root kinds that are not lists. When a
// marker does not parse, controller-tools drops all markers of the package
// and the error says which.
func (b *apiBuilder) rootKinds(pkg *loader.Package, lines []markerLine) (map[string]*Kind, error) {
	tags := tagsByType(lines)
	kinds := map[string]*Kind{}
	lists := map[string]bool{}
	b.objects = nil
	err := ctmarkers.EachType(b.in.Collector, pkg, func(info *ctmarkers.TypeInfo) {
		t := tags[info.RawSpec]
		structural := isStructuralKind(pkg, info, t)
		if !isRoot(info, t) && !structural {
			return
		}
		b.objects = append(b.objects, info.Name)
		if !embedsDefined(pkg, info, "ObjectMeta", "ListMeta") {
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
			b.in.Warnings.Add(k.Pos, "%s embeds metav1.TypeMeta and metav1.ObjectMeta but has no +kubebuilder:object:root=true (or +genclient): opgen takes it for a kind, as controller-gen does for its CRD, and also generates its DeepCopyObject, registration and client; add the marker to say so", k.Name)
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
		if embedsIn(f.RawField, names) {
			return true
		}
	}
	return false
}

// embedsIn reports whether f embeds a type of one of names.
func embedsIn(f *ast.Field, names []string) bool {
	if len(f.Names) > 0 {
		return false
	}
	t := f.Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	sel, ok := t.(*ast.SelectorExpr)
	return ok && slices.Contains(names, sel.Sel.Name)
}

// embedsDefined is embeds for a type defined on another struct type
// (type ReferenceGrant v1.ReferenceGrant, as Gateway API declares an older
// version's kind): the fields are the other type's, which the CRD
// generator reads through it. It looks the type up in pkg and the
// packages pkg imports, by their syntax.
func embedsDefined(pkg *loader.Package, info *ctmarkers.TypeInfo, names ...string) bool {
	if _, ok := info.RawSpec.Type.(*ast.StructType); ok {
		return embeds(info, names...)
	}
	st := definedStruct(pkg, info.RawFile, info.RawSpec.Type, 0)
	if st == nil {
		return false
	}
	for _, f := range st.Fields.List {
		if embedsIn(f, names) {
			return true
		}
	}
	return false
}

// definedStruct returns the struct type expr names, following defined
// types (not pointers or other composites) a few steps, or nil.
func definedStruct(pkg *loader.Package, file *ast.File, expr ast.Expr, depth int) *ast.StructType {
	if depth > 4 || pkg == nil {
		return nil
	}
	var name string
	switch e := expr.(type) {
	case *ast.StructType:
		return e
	case *ast.Ident:
		name = e.Name
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		if !ok || file == nil {
			return nil
		}
		pkg, name = importedAs(pkg, file, x.Name), e.Sel.Name
		if pkg == nil {
			return nil
		}
	default:
		return nil
	}
	pkg.NeedSyntax()
	for _, f := range pkg.Syntax {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				if ts, ok := spec.(*ast.TypeSpec); ok && ts.Name.Name == name {
					return definedStruct(pkg, f, ts.Type, depth+1)
				}
			}
		}
	}
	return nil
}

// importedAs returns the package file imports as name, among pkg's
// imports, or nil.
func importedAs(pkg *loader.Package, file *ast.File, name string) *loader.Package {
	for _, imp := range file.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		dep := pkg.Imports()[path]
		if dep == nil {
			continue
		}
		if imp.Name != nil {
			if imp.Name.Name == name {
				return dep
			}
			continue
		}
		if dep.Name == name {
			return dep
		}
	}
	return nil
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
		Pos:        b.in.Fset.Position(info.RawSpec.Name.Pos()),
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

// runtimeObject is the interface +k8s:deepcopy-gen:interfaces names for a
// root object.
const runtimeObject = "k8s.io/apimachinery/pkg/runtime.Object"

// clientTags are a kind's +genclient tags as client-gen parses them.
type clientTags = clientutil.Tags

// typeTags are the code-generator tags of one type.
type typeTags struct {
	// genclient are the +genclient lines, in file order.
	genclient []markerLine
	// object is true when +k8s:deepcopy-gen:interfaces names runtime.Object.
	object bool
}

// tagsByType returns the code-generator tags of each type among lines.
func tagsByType(lines []markerLine) map[*ast.TypeSpec]*typeTags {
	out := map[*ast.TypeSpec]*typeTags{}
	for _, l := range lines {
		if l.Type == nil {
			continue
		}
		t := out[l.Type]
		if t == nil {
			t = &typeTags{}
			out[l.Type] = t
		}
		switch {
		case l.Text == "+genclient" || strings.HasPrefix(l.Text, "+genclient:"):
			t.genclient = append(t.genclient, l)
		case strings.HasPrefix(l.Text, "+k8s:deepcopy-gen:interfaces="):
			for _, iface := range strings.Split(strings.TrimPrefix(l.Text, "+k8s:deepcopy-gen:interfaces="), ",") {
				t.object = t.object || iface == runtimeObject
			}
		}
	}
	return out
}

// isRoot reports whether a type is a root object: +kubebuilder:object:root
// says so (true or false), or code-generator's +genclient or
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object do.
func isRoot(info *ctmarkers.TypeInfo, tags *typeTags) bool {
	if root, ok := info.Markers.Get("kubebuilder:object:root").(bool); ok {
		return root
	}
	return tags != nil && (len(tags.genclient) > 0 || tags.object)
}

// isStructuralKind reports whether a type without root markers or tags is
// a kind or a list by its structure, as controller-gen's CRD generator
// finds kinds: it embeds TypeMeta and ObjectMeta (or ListMeta).
func isStructuralKind(pkg *loader.Package, info *ctmarkers.TypeInfo, tags *typeTags) bool {
	if info.Markers.Get("kubebuilder:object:root") != nil || (tags != nil && (len(tags.genclient) > 0 || tags.object)) {
		return false
	}
	return embedsDefined(pkg, info, "TypeMeta") && embedsDefined(pkg, info, "ObjectMeta", "ListMeta")
}

// applyClientTags checks a kind's +genclient tags with client-gen's own
// parser and that the CRD's scope agrees with the client's. A kind tagged
// +genclient:nonNamespaced whose CRD is namespaced gets a client that
// addresses objects the server does not serve. controller-gen reads only
// +kubebuilder:resource:scope, so opgen keeps the CRD as controller-gen
// writes it and warns, or, under --strict, fails; either way the message
// gives the marker to add.
func (b *apiBuilder) applyClientTags(pkg *loader.Package, k *Kind, info *ctmarkers.TypeInfo, tags *typeTags) {
	if tags == nil || len(tags.genclient) == 0 {
		return
	}
	for _, l := range tags.genclient {
		k.ClientTags = append(k.ClientTags, l.Text)
	}
	parsed, err := clientutil.ParseClientGenTags(k.ClientTags)
	if err != nil {
		b.in.Errors.Add(tags.genclient[0].Pos, "%s: +genclient tags: %v (client-gen's syntax: +genclient, +genclient:nonNamespaced, +genclient:noStatus, +genclient:onlyVerbs=get,list, +genclient:skipVerbs=watch, +genclient:method=Name,verb=...)", k.Name, err)
		k.ClientTags = nil
		return
	}
	k.clientVerbs = parsed
	if !parsed.NonNamespaced || b.noCRD {
		return // no CRD (+kubebuilder:skip) to disagree with
	}
	res, scoped := info.Markers.Get("kubebuilder:resource").(crdmarkers.Resource)
	switch {
	case scoped && strings.EqualFold(res.Scope, "Cluster"):
	case scoped && res.Scope != "":
		b.in.Errors.Add(nonNamespacedPos(tags, k), "%s: +genclient:nonNamespaced makes its client cluster-scoped, but +kubebuilder:resource:scope=%s makes its CRD namespaced, so the client would address objects the API server does not serve: drop +genclient:nonNamespaced, or write scope=Cluster", k.Name, res.Scope)
	case b.in.Options.StrictMarkers:
		b.in.Errors.Add(nonNamespacedPos(tags, k), "%s: +genclient:nonNamespaced makes its client cluster-scoped, but without +kubebuilder:resource:scope=Cluster its CRD is namespaced (controller-gen reads only that marker), so the client would address objects the API server does not serve: add +kubebuilder:resource:scope=Cluster", k.Name)
	default:
		b.in.Warnings.Add(nonNamespacedPos(tags, k), "%s: +genclient:nonNamespaced makes its client cluster-scoped, but without +kubebuilder:resource:scope=Cluster its CRD is namespaced, as controller-gen writes it (it reads only that marker), so the client addresses objects the API server does not serve: add +kubebuilder:resource:scope=Cluster (opgen generate --strict makes this an error)", k.Name)
	}
}

func nonNamespacedPos(tags *typeTags, k *Kind) token.Position {
	for _, l := range tags.genclient {
		if l.Text == "+genclient:nonNamespaced" {
			return l.Pos
		}
	}
	return k.Pos
}

// setTypeMarker sets the value of marker name on a type in the collector's
// cache of pkg's markers, so that controller-tools' generators read it as
// if written.
func (b *apiBuilder) setTypeMarker(pkg *loader.Package, spec *ast.TypeSpec, name string, value any) {
	byNode, err := b.in.Collector.MarkersInPackage(pkg)
	if err != nil {
		return
	}
	if byNode[spec] == nil {
		byNode[spec] = ctmarkers.MarkerValues{}
	}
	byNode[spec][name] = []any{value}
}

// ReceiverName is the name of the type of a method's receiver (T or *T),
// or "" for a function.
func ReceiverName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return ""
	}
	t := fn.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// pkgRead is what read finds in a package.
type pkgRead struct {
	lines        []markerLine
	group        string
	groupPos     token.Position
	kinds        map[string]*Kind
	collectorErr error // the marker collector's, when a marker does not parse
	controllers  bool  // the package is the controller package
}

// read reads pkg's marker lines, its group and its root kinds.
func (b *apiBuilder) read(pkg *loader.Package) *pkgRead {
	p := &pkgRead{lines: scanMarkers(b.in.Fset, pkg), controllers: b.isControllerPackage(pkg)}
	b.noCRD = skipsCRDs(p.lines)
	p.group, p.groupPos = b.groupName(p.lines)
	p.kinds, p.collectorErr = b.rootKinds(pkg, p.lines)
	return p
}

// isControllerPackage reports whether pkg is the project's controller
// package, where handler types of built-in kinds live.
func (b *apiBuilder) isControllerPackage(pkg *loader.Package) bool {
	return len(pkg.GoFiles) > 0 && filepath.Dir(pkg.GoFiles[0]) == b.in.Options.ControllerAbs
}
