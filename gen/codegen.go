package gen

import (
	"go/ast"
	"go/token"
	"strings"

	clientutil "k8s.io/code-generator/cmd/client-gen/generators/util"
	"k8s.io/gengo/v2/namer"
	"sigs.k8s.io/controller-tools/pkg/loader"
	ctmarkers "sigs.k8s.io/controller-tools/pkg/markers"

	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"
)

// This file reads code-generator's tags, so that API types written for
// code-generator and controller-gen (kube_codegen.sh) work unchanged:
// +genclient selects the kinds that get clients and its options pass to
// client-gen as written; +k8s:deepcopy-gen:interfaces=...runtime.Object
// makes a root object like +kubebuilder:object:root; +groupGoName names the
// group in generated Go.

// runtimeObject is the interface +k8s:deepcopy-gen:interfaces names for a
// root object.
const runtimeObject = "k8s.io/apimachinery/pkg/runtime.Object"

// clientTags are a kind's +genclient tags as client-gen parses them.
type clientTags = clientutil.Tags

// setGroupGoName records the +groupGoName of a package of g; packages of
// one group that name it differently are an error.
func (b *apiBuilder) setGroupGoName(g *Group, lines []markerLine) {
	name, pos := groupGoName(lines)
	switch {
	case name == "":
	case g.GoNameOverride == "":
		g.GoNameOverride, g.goNamePos = name, pos
	case g.GoNameOverride != name:
		b.ctx.Errors.Add(pos, "conflicting +groupGoName: %s here, %s at %s, for the same group %s; give every package of a group the same +groupGoName", name, g.GoNameOverride, g.goNamePos, g.Name)
	}
}

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
func isStructuralKind(info *ctmarkers.TypeInfo, tags *typeTags) bool {
	if info.Markers.Get("kubebuilder:object:root") != nil || (tags != nil && (len(tags.genclient) > 0 || tags.object)) {
		return false
	}
	return embeds(info, "TypeMeta") && embeds(info, "ObjectMeta", "ListMeta")
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
		b.ctx.Errors.Add(tags.genclient[0].Pos, "%s: +genclient tags: %v (client-gen's syntax: +genclient, +genclient:nonNamespaced, +genclient:noStatus, +genclient:onlyVerbs=get,list, +genclient:skipVerbs=watch, +genclient:method=Name,verb=...)", k.Name, err)
		k.ClientTags = nil
		return
	}
	k.clientVerbs = parsed
	if !parsed.NonNamespaced {
		return
	}
	res, scoped := info.Markers.Get("kubebuilder:resource").(crdmarkers.Resource)
	switch {
	case scoped && strings.EqualFold(res.Scope, "Cluster"):
	case scoped && res.Scope != "":
		b.ctx.Errors.Add(nonNamespacedPos(tags, k), "%s: +genclient:nonNamespaced makes its client cluster-scoped, but +kubebuilder:resource:scope=%s makes its CRD namespaced, so the client would address objects the API server does not serve: drop +genclient:nonNamespaced, or write scope=Cluster", k.Name, res.Scope)
	case b.ctx.Project.StrictMarkers:
		b.ctx.Errors.Add(nonNamespacedPos(tags, k), "%s: +genclient:nonNamespaced makes its client cluster-scoped, but without +kubebuilder:resource:scope=Cluster its CRD is namespaced (controller-gen reads only that marker), so the client would address objects the API server does not serve: add +kubebuilder:resource:scope=Cluster", k.Name)
	default:
		b.ctx.Warnings.Add(nonNamespacedPos(tags, k), "%s: +genclient:nonNamespaced makes its client cluster-scoped, but without +kubebuilder:resource:scope=Cluster its CRD is namespaced, as controller-gen writes it (it reads only that marker), so the client addresses objects the API server does not serve: add +kubebuilder:resource:scope=Cluster (opgen generate --strict makes this an error)", k.Name)
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
	byNode, err := b.ctx.Collector.MarkersInPackage(pkg)
	if err != nil {
		return
	}
	if byNode[spec] == nil {
		byNode[spec] = ctmarkers.MarkerValues{}
	}
	byNode[spec][name] = []any{value}
}

// needsList reports whether a kind's client lists or watches it, which
// takes its list type.
func (k *Kind) needsList() bool {
	if len(k.ClientTags) == 0 {
		return k.Client
	}
	return k.clientVerbs.HasVerb("list") || k.clientVerbs.HasVerb("watch")
}

// settleClients decides which kinds of v get clients, and reports the kinds
// without a list type where that makes the output wrong: in a package that
// tags kinds +genclient, those kinds, as client-gen does; otherwise every
// kind with a list type. A kind without a list type keeps its CRD and deep
// copies; it is an error only when a controller or its +genclient tags
// need the list.
func (b *apiBuilder) settleClients(v *Version) {
	tagged := false
	for _, k := range v.Kinds {
		tagged = tagged || len(k.ClientTags) > 0
	}
	for _, k := range v.Kinds {
		k.Client = k.HasList
		if tagged {
			k.Client = len(k.ClientTags) > 0
		}
		if !v.ClientLayout() {
			k.Client = false
			if k.Controller != nil {
				b.ctx.Errors.Add(k.Pos, "kind %s has a controller, which needs its client, lister and informer, but its package's directory is not named after its version %s, and code-generator's generators take the version from the directory: move the package to a directory <group>/%s", k.Name, v.Name, v.Name)
			}
			continue
		}
		if k.HasList {
			continue
		}
		list := "declare " + k.Name + "List with +kubebuilder:object:root=true, metav1.TypeMeta, metav1.ListMeta and Items []" + k.Name
		switch {
		case k.Controller != nil:
			b.ctx.Errors.Add(k.Pos, "kind %s has no list type, and its controller needs one: it lists and watches %s objects through the generated informer; %s", k.Name, k.Name, list)
		case tagged && k.needsList():
			b.ctx.Errors.Add(k.Pos, "kind %s has no list type, and its +genclient client lists or watches it, which returns a %sList: %s, or limit the client's verbs (+genclient:onlyVerbs=create,get,update,delete)", k.Name, k.Name, list)
		case !tagged:
			k.Client = false
			b.ctx.Warnings.Add(k.Pos, "kind %s has no list type: its CRD and deep copies are generated, but no typed client, lister or informer, which list %s objects; to get them, %s", k.Name, k.Name, list)
		}
	}
}

// groupGoName returns the +groupGoName of a package's lines, as client-gen
// turns it into a Go identifier, or "".
func groupGoName(lines []markerLine) (string, token.Position) {
	for _, l := range lines {
		if name, ok := strings.CutPrefix(l.Text, "+groupGoName="); ok {
			return namer.IC(strings.Trim(name, `"`)), l.Pos
		}
	}
	return "", token.Position{}
}

// HandWrittenDeepCopyObject returns the types of pkg whose DeepCopyObject
// the user wrote: the loader skips generated files, so every method it sees
// is the user's.
func HandWrittenDeepCopyObject(pkg *loader.Package) map[string]bool {
	out := map[string]bool{}
	for _, f := range pkg.Syntax {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != "DeepCopyObject" || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			t := fn.Recv.List[0].Type
			if star, ok := t.(*ast.StarExpr); ok {
				t = star.X
			}
			if id, ok := t.(*ast.Ident); ok {
				out[id.Name] = true
			}
		}
	}
	return out
}

// skippedPackage is a package that declares no kind.
type skippedPackage struct {
	path  string
	group string
	pos   token.Position
	// types: a package without a group that asks for deep copies
	// (+kubebuilder:object:generate=true or +k8s:deepcopy-gen=package), a
	// library of types to embed, which is all it was meant to get.
	types bool
}

// skipped records a package that declares no kind, for reportSkipped.
func (b *apiBuilder) skipped(pkg *loader.Package, groupPos token.Position, lines []markerLine) {
	s := skippedPackage{path: pkg.PkgPath, pos: groupPos}
	for _, l := range lines {
		if g, ok := strings.CutPrefix(l.Text, "+groupName="); ok && s.group == "" {
			s.group = strings.Trim(g, `"`)
		}
		if l.Text == "+k8s:deepcopy-gen=package" {
			s.types = true
		}
	}
	s.types = s.types || asksForDeepCopies(pkg)
	b.skips = append(b.skips, s)
}

// kindHelp says what makes a kind.
const kindHelp = "a kind is a struct that embeds metav1.TypeMeta and metav1.ObjectMeta, in a package whose doc.go has +groupName=<group>, marked +kubebuilder:object:root=true (kubebuilder's style) or +genclient and +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object (code-generator's)"

// asksForDeepCopies reports whether pkg carries kubebuilder's package
// marker +kubebuilder:object:generate=true (scanMarkers leaves kubebuilder's
// markers to controller-tools).
func asksForDeepCopies(pkg *loader.Package) bool {
	for _, file := range pkg.Syntax {
		for _, group := range file.Comments {
			for _, c := range group.List {
				if text, ok := markerText(c.Text); ok && text == "+kubebuilder:object:generate=true" {
					return true
				}
			}
		}
	}
	return false
}

// onlyTypes reports whether every skipped package is a library of types
// without a group, as a run over such a library alone expects: no kind is
// then no surprise. It is false when nothing was skipped.
func onlyTypes(skips []skippedPackage) bool {
	for _, s := range skips {
		if !s.types || s.pos.IsValid() {
			return false
		}
	}
	return true
}

// reportSkipped warns about the packages with a group but no kind, which
// get no CRD or client; when the run found no kind at all, one warning
// lists every package it read, and says what makes a kind.
func (b *apiBuilder) reportSkipped(api *API) {
	if len(api.Kinds()) == 0 && len(api.BuiltinControllers) == 0 && !onlyTypes(b.skips) {
		var seen []string
		for _, s := range b.skips {
			if s.pos.IsValid() {
				seen = append(seen, s.path+" (+groupName="+s.group+", no kind)")
			} else {
				seen = append(seen, s.path+" (no +groupName)")
			}
		}
		b.ctx.Warnings.Add(token.Position{}, "no kind found, so no CRD, registration or client was generated; read: %s; %s", strings.Join(seen, ", "), kindHelp)
		return
	}
	for _, s := range b.skips {
		switch {
		case s.pos.IsValid() && s.group == "":
			b.ctx.Warnings.Add(s.pos, "package %s has an empty +groupName, so it is skipped: give the group's name (+groupName=example.com)", s.path)
		case s.pos.IsValid():
			b.ctx.Warnings.Add(s.pos, "package %s declares +groupName=%s but no kind, so it gets no CRD, registration or client; %s", s.path, s.group, kindHelp)
		}
	}
}
