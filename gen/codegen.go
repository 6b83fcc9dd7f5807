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

// applyClientTags checks a kind's +genclient tags with client-gen's own
// parser and makes the CRD's scope agree with the client's: a kind tagged
// +genclient:nonNamespaced without a +kubebuilder:resource scope is
// cluster-scoped in its CRD too, and one with a namespaced scope is an
// error, since the client would address objects the server does not serve.
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
	case scoped && res.Scope != "" && !strings.EqualFold(res.Scope, "Cluster"):
		b.ctx.Errors.Add(nonNamespacedPos(tags, k), "%s: +genclient:nonNamespaced makes its client cluster-scoped, but +kubebuilder:resource:scope=%s makes its CRD namespaced, so the client would address objects the API server does not serve: drop +genclient:nonNamespaced, or write scope=Cluster", k.Name, res.Scope)
	default:
		k.Namespaced = false
		res.Scope = "Cluster"
		b.setTypeMarker(pkg, info.RawSpec, "kubebuilder:resource", res)
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
