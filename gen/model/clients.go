package model

// The clients: which kinds get a typed client, lister and informer, the
// group's Go name, and the packages skipped for want of a kind.

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strings"

	"k8s.io/gengo/v2/namer"
	"sigs.k8s.io/controller-tools/pkg/loader"
)

// setGroupGoName records the +groupGoName of a package of g; packages of
// one group that name it differently are an error.
func (b *apiBuilder) setGroupGoName(g *Group, lines []markerLine) {
	name, pos := groupGoName(lines)
	switch {
	case name == "":
	case g.GoNameOverride == "":
		g.GoNameOverride, g.goNamePos = name, pos
	case g.GoNameOverride != name:
		b.in.Errors.Add(pos, "conflicting +groupGoName: %s here, %s at %s, for the same group %s; give every package of a group the same +groupGoName", name, g.GoNameOverride, g.goNamePos, g.Name)
	}
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
func (b *apiBuilder) settleClients(v *Version, lines []markerLine) {
	switch {
	case b.in.Options.ClientKinds == "none" || !b.selectedForClients(v):
		b.noClients(v)
		return
	case b.in.Options.ClientKinds == "genclient":
		b.clientsAsTagged(v, lines)
		return
	}
	v.ClientInput = v.ClientLayout()
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
				b.in.Errors.Add(k.Pos, "kind %s has a controller, which needs its client, lister and informer, but its package's directory is not named after its version %s, and code-generator's generators take the version from the directory: move the package to a directory <group>/%s", k.Name, v.Name, v.Name)
			}
			continue
		}
		if k.HasList {
			continue
		}
		list := "declare " + k.Name + "List with +kubebuilder:object:root=true, metav1.TypeMeta, metav1.ListMeta and Items []" + k.Name
		switch {
		case k.Controller != nil:
			b.in.Errors.Add(k.Pos, "kind %s has no list type, and its controller needs one: it lists and watches %s objects through the generated informer; %s", k.Name, k.Name, list)
		case tagged && k.needsList():
			b.in.Errors.Add(k.Pos, "kind %s has no list type, and its +genclient client lists or watches it, which returns a %sList: %s, or limit the client's verbs (+genclient:onlyVerbs=create,get,update,delete)", k.Name, k.Name, list)
		case !tagged:
			k.Client = false
			if !b.in.Options.Checks.Clients {
				continue
			}
			b.in.Warnings.Add(k.Pos, "kind %s has no list type: its CRD and deep copies are generated, but no typed client, lister or informer, which list %s objects; to get them, %s", k.Name, k.Name, list)
		}
	}
}

// selectedForClients reports whether the run's options leave v's package
// among those that get clients (ClientDirs).
func (b *apiBuilder) selectedForClients(v *Version) bool {
	return b.in.Options.ClientDirs == nil || b.in.Options.ClientDirs[v.Dir]
}

// noClients gives none of v's kinds a client; a controller, which needs
// one, is an error.
func (b *apiBuilder) noClients(v *Version) {
	for _, k := range v.Kinds {
		k.Client = false
		if k.Controller != nil {
			b.in.Errors.Add(k.Pos, "kind %s has a controller, which needs its client, lister and informer, but the run generates no client for its package: drop --clients=none, or add the package to --client-packages", k.Name)
		}
	}
}

// clientsAsTagged selects the clients as client-gen does: a package is an
// input when a line of it is a +genclient tag, and the types tagged
// +genclient get clients, with their tags as written.
func (b *apiBuilder) clientsAsTagged(v *Version, lines []markerLine) {
	v.ClientInput = v.ClientLayout() && hasGenclient(lines)
	for _, k := range v.Kinds {
		k.Client = v.ClientInput && len(k.ClientTags) > 0
		if k.Controller != nil && !k.Client {
			b.in.Errors.Add(k.Pos, "kind %s has a controller, which needs its client, lister and informer, but with --clients=genclient only the types tagged +genclient get one: add +genclient to %s", k.Name, k.Name)
		}
	}
}

// clientOnly records a package with a group and a +genclient line but no
// kind, which client-gen gives a group client (API.ClientOnly), when the
// clients follow client-gen's selection.
func (b *apiBuilder) clientOnly(pkg *loader.Package, p *pkgRead) {
	if b.in.Options.ClientKinds != "genclient" || p.group == "" || !hasGenclient(p.lines) || len(pkg.GoFiles) == 0 {
		return
	}
	g := b.groups[p.group]
	if g == nil {
		g = &Group{Name: p.group} // a group of no version: not in the API's groups
	}
	b.setGroupGoName(g, p.lines)
	dir := filepath.Dir(pkg.GoFiles[0])
	v := &Version{Group: g, Name: pkg.Name, Package: pkg, Dir: dir, ImportPath: pkg.PkgPath, Pos: p.groupPos}
	if v.ClientLayout() && b.selectedForClients(v) {
		v.ClientInput = true
		b.clientOnlys = append(b.clientOnlys, v)
		b.skips[len(b.skips)-1].types = true // it gets what it asks for
	}
}

// hasGenclient reports whether a line is a +genclient tag.
func hasGenclient(lines []markerLine) bool {
	for _, l := range lines {
		if l.Text == "+genclient" || strings.HasPrefix(l.Text, "+genclient:") {
			return true
		}
	}
	return false
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

// clients reads what v's markers say of its clients: the group's Go name
// and which kinds get a typed client.
func (b *apiBuilder) clients(v *Version, lines []markerLine) {
	b.setGroupGoName(v.Group, lines)
	b.settleClients(v, lines)
}
