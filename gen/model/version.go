package model

import (
	"go/token"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-tools/pkg/loader"
	ctmarkers "sigs.k8s.io/controller-tools/pkg/markers"

	"github.com/opgen-sdk/opgen/gen/markers"
)

// sharedGroupVersion reports a second package for group version gv: each
// kind both declare is a duplicate kind, and the second package is left
// out. Without one, controller-gen merges the packages' kinds into the
// group version's CRDs, and so does opgen, with a warning: the second
// package gets no client, which would clash with the first's. It returns
// whether the second package stays in the model.
func (b *apiBuilder) sharedGroupVersion(prev *Version, gv schema.GroupVersion, pos token.Position, kinds map[string]*Kind, pkgPath string) bool {
	dup := false
	for _, k := range prev.Kinds {
		if again := kinds[k.Name]; again != nil {
			dup = true
			b.in.Errors.Add(again.Pos, "duplicate kind: %s %s is also declared at %s; declare each kind once per group version (remove one, or move it to another version)", gv, k.Name, k.Pos)
		}
	}
	switch {
	case dup:
	case b.in.Options.Checks.Clients:
		b.in.Warnings.Add(pos, "group version %s is also declared by package %s (%s): the CRDs take the kinds of both, as controller-gen does, but only the first gets a typed client; to give %s one, put the group version's kinds in one package or give this package another version", gv, prev.ImportPath, prev.Pos, pkgPath)
	default:
		b.in.Warnings.Add(pos, "group version %s is also declared by package %s (%s): the CRDs take the kinds of both, as controller-gen does", gv, prev.ImportPath, prev.Pos)
	}
	return !dup
}

// selectedForCRDs reports whether the run's CRD patterns (Options.CRDDirs)
// leave the package in dir among those that get CRDs.
func (b *apiBuilder) selectedForCRDs(dir string) bool {
	return b.in.Options.CRDDirs == nil || b.in.Options.CRDDirs[dir]
}

// skipsCRDs reports whether a package's lines carry the package marker
// +kubebuilder:skip, with which controller-gen makes no CRD of its kinds.
func skipsCRDs(lines []markerLine) bool {
	for _, l := range lines {
		if l.Type == nil && l.Text == "+kubebuilder:skip" {
			return true
		}
	}
	return false
}

// skippedPackage is a package that declares no kind.
type skippedPackage struct {
	path  string
	group string
	pos   token.Position
	// types: a package of types that are not kinds, which is all it was
	// meant to have: it asks for deep copies (+kubebuilder:object:generate
	// or +k8s:deepcopy-gen=package, a library of types to embed), declares
	// root objects without ObjectMeta (a component config) or carries
	// code-generator tags (conversions, defaulters).
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
	s.types = s.types || asksForDeepCopies(pkg) || len(b.objects) > 0 || hasGeneratorTags(pkg)
	b.skips = append(b.skips, s)
}

// hasGeneratorTags reports whether a package carries code-generator tags
// for its types (conversions, defaulters): they are there for those
// generators, not for a CRD.
func hasGeneratorTags(pkg *loader.Package) bool {
	for _, file := range pkg.Syntax {
		for _, group := range file.Comments {
			for _, c := range group.List {
				if text, ok := markerText(c.Text); ok && (strings.HasPrefix(text, "+k8s:conversion-gen") || strings.HasPrefix(text, "+k8s:defaulter-gen")) {
					return true
				}
			}
		}
	}
	return false
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
		b.in.Warnings.Add(token.Position{}, "no kind found, so no CRD, registration or client was generated; read: %s; %s", strings.Join(seen, ", "), kindHelp)
		return
	}
	for _, s := range b.skips {
		switch {
		case s.pos.IsValid() && s.group == "":
			b.in.Warnings.Add(s.pos, "package %s has an empty +groupName, so it is skipped: give the group's name (+groupName=example.com)", s.path)
		case s.pos.IsValid() && !s.types:
			b.in.Warnings.Add(s.pos, "package %s declares +groupName=%s but no kind, so it gets no CRD, registration or client; %s", s.path, s.group, kindHelp)
		}
	}
}

func (b *apiBuilder) newVersion(pkg *loader.Package, group string, pos token.Position, kinds map[string]*Kind, lines []markerLine) *Version {
	dir := filepath.Dir(pkg.GoFiles[0])
	version := pkg.Name
	if pm, err := ctmarkers.PackageMarkers(b.in.Collector, pkg); err == nil {
		if vn, ok := pm.Get("versionName").(string); ok && vn != "" {
			version = vn
		}
	}
	if !validVersion(version) {
		b.in.Errors.Add(pos, "package %s declares +groupName=%s, so it is the version %q of that group, which is not of the form v1, v1beta1, v2alpha1 that Kubernetes orders versions by and opgen's kind references (group/version.Kind) need: name the package after the version, or add +versionName=v1 beside +groupName", pkg.PkgPath, group, version)
		return nil
	}
	if filepath.Base(dir) != version && b.in.Options.Checks.Clients {
		b.in.Warnings.Add(pos, "package %s is the version %s of %s, but its directory is %s: its CRDs, deep copies and registration are generated, but no client, since code-generator's lister, informer and apply configuration generators take the group and version from the last two elements of the import path; to get a client, move the package to a directory <group>/%s", pkg.PkgPath, version, group, filepath.Base(dir), version)
	}
	gv := schema.GroupVersion{Group: group, Version: version}
	prev := b.gvs[gv]
	if prev != nil && !b.sharedGroupVersion(prev, gv, pos, kinds, pkg.PkgPath) {
		return nil
	}
	g := b.groups[group]
	if g == nil {
		g = &Group{Name: group}
		b.groups[group] = g
	}
	v := &Version{Group: g, Name: version, Package: pkg, Dir: dir, ImportPath: pkg.PkgPath, Pos: pos, NoCRD: skipsCRDs(lines) || !b.selectedForCRDs(dir), SharedWith: prev}
	g.Versions = append(g.Versions, v)
	if prev == nil {
		b.gvs[gv] = v
	}
	return v
}

func validVersion(v string) bool {
	_, err := markers.ParseKindRef(v + ".X")
	return err == nil
}

// implyObjectGenerate makes an API package behave as if it declared
// +kubebuilder:object:generate=true, which kubebuilder projects write in
// groupversion_info.go: every type of an API package gets deep copies, not
// only the root kinds. An explicit marker, true or false, wins. The value
// is added to the collector's cached markers of the package's first file.
func (b *apiBuilder) implyObjectGenerate(pkg *loader.Package) {
	const name = "kubebuilder:object:generate"
	byNode, err := b.in.Collector.MarkersInPackage(pkg)
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

// version makes the version that pkg declares, with its kinds, or returns
// nil when it declares none: a package without a group or without a kind
// is skipped (reportSkipped).
func (b *apiBuilder) version(pkg *loader.Package, p *pkgRead) *Version {
	if p.group == "" || len(p.kinds) == 0 {
		// Without a kind, a package of shared types with a group, like a
		// hub: nothing to serve, which the run reports when it finds no
		// kind at all.
		b.skipped(pkg, p.groupPos, p.lines)
		b.clientOnly(pkg, p)
		return nil
	}
	v := b.newVersion(pkg, p.group, p.groupPos, p.kinds, p.lines)
	if v == nil {
		return nil
	}
	v.Objects = b.objects
	sort.Strings(v.Objects)
	b.implyObjectGenerate(pkg)
	for _, k := range p.kinds {
		k.Version = v
		v.Kinds = append(v.Kinds, k)
	}
	sort.Slice(v.Kinds, func(i, j int) bool { return v.Kinds[i].Name < v.Kinds[j].Name })
	return v
}

// PackageVersion describes a package that is not one of the model's
// versions (it declares no kind: a component config, an internal version)
// as a version, for the generators that write into every package with a
// code-generator tag: its group is its +groupName, if any; its version,
// the package's name; its position, its package clause.
func PackageVersion(fset *token.FileSet, pkg *loader.Package) *Version {
	pkg.NeedSyntax()
	v := &Version{Group: &Group{}, Name: pkg.Name, Package: pkg, ImportPath: pkg.PkgPath}
	if len(pkg.GoFiles) > 0 {
		v.Dir = filepath.Dir(pkg.GoFiles[0])
	}
	for _, l := range scanMarkers(fset, pkg) {
		if name, ok := strings.CutPrefix(l.Text, "+groupName="); ok && v.Group.Name == "" {
			v.Group.Name, v.Pos = strings.Trim(name, `"`), l.Pos
		}
	}
	if !v.Pos.IsValid() && len(pkg.Syntax) > 0 {
		v.Pos = fset.Position(pkg.Syntax[0].Package)
	}
	return v
}
