package model

// Checking what the markers and the kinds say that cannot be: of each
// package as it is read (check), and of the whole API once read
// (checkKinds).

import (
	"fmt"
	"go/token"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-tools/pkg/loader"

	"github.com/opgen-sdk/opgen/gen/diag"
	"github.com/opgen-sdk/opgen/gen/internal/servedkinds"
	"github.com/opgen-sdk/opgen/gen/markers"
)

// checkKubebuilderMarkers reports the +kubebuilder: markers of pkg that
// controller-tools does not know, or whose arguments do not parse, and
// +opgen:controller:owns lists separated by commas, at their positions.
// controller-gen ignores an unknown marker, so it is a warning unless the
// run is strict (Options.StrictMarkers); one that does not parse fails
// controller-gen too. It runs before the collector's errors are added, so
// that its message, with the fix, replaces the collector's about the same
// line.
func (b *apiBuilder) checkKubebuilderMarkers(pkg *loader.Package) {
	pkg.NeedSyntax()
	for _, file := range pkg.Syntax {
		for _, group := range file.Comments {
			for _, c := range group.List {
				text, ok := markerText(c.Text)
				if !ok {
					continue
				}
				found := markers.CheckKubebuilder(text, b.in.Collector.Registry)
				if found.Msg == "" {
					found.Msg = markers.CheckOwnsList(text)
				}
				switch {
				case found.Msg == "":
				case found.Ignored && !b.in.Options.StrictMarkers:
					b.in.Warnings.Add(b.in.Fset.Position(c.Pos()), "%s; opgen generate --strict-markers makes this an error", found.Msg)
				default:
					b.in.Errors.Add(b.in.Fset.Position(c.Pos()), "%s", found.Msg)
				}
			}
		}
	}
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
			b.in.Errors.AddErr(&diag.Error{Pos: l.Pos, Msg: markers.Unknown(name).Error()})
		case !kindsKnown:
		case name == forMarker && l.Type != nil && kinds[l.Type.Name.Name] == nil:
			b.in.Errors.Add(l.Pos, "%s has +%s outside the controller package: handler types of built-in kinds live in %s, whose generated glue registers them; move %s there", l.Type.Name.Name, name, b.in.Options.ControllerDir, l.Type.Name.Name)
		case l.Type == nil:
			b.in.Errors.Add(l.Pos, "+%s is not on a type: put it in the doc comment of a root kind (a type with +kubebuilder:object:root=true)", name)
		case kinds[l.Type.Name.Name] == nil:
			b.in.Errors.Add(l.Pos, "%s has +%s but is not a root kind: add +kubebuilder:object:root=true to %s (and declare %sList), or move the marker to the kind's type", l.Type.Name.Name, name, l.Type.Name.Name, l.Type.Name.Name)
		}
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
					b.in.Errors.Add(k.Pos, "duplicate kind: %s and %s (%s) are both served as %s.%s; rename one kind or set +kubebuilder:resource:path to another plural", k.Name, prev.Name, prev.Pos, k.Plural, g.Name)
				}
				byResource[k.Plural] = k
				if k.Controller == nil {
					continue
				}
				if prev := controllerOf[k.Name]; prev != nil && (k.Controller.Dispatch == "" || prev.Controller.Dispatch == "") {
					b.in.Errors.Add(k.Pos, "duplicate kind: %s has +opgen:controller markers in %s and in %s (%s); a kind has one controller unless each version's says which objects it handles: add +opgen:controller:dispatch=written (by the version an object was last written in) or +opgen:controller:dispatch=<version> (that version handles all) to the type in every version, or keep the markers on one version (usually the storage version)", k.Name, v.Name, prev.Version.Name, prev.Pos)
				}
				controllerOf[k.Name] = k
			}
		}
	}
	for _, o := range b.owns {
		if err := api.checkOwned(o.gvk); err != nil {
			b.in.Errors.Add(o.pos, "%v", err)
		}
	}
	retained := func(name string, pos token.Position, spec *markers.ControllerSpec) {
		for _, gvk := range spec.Retain {
			if !slices.Contains(spec.Owns, gvk) {
				b.in.Errors.Add(pos, "%s retains %s (+opgen:controller:retain), which it does not own: add it to +opgen:controller:owns", name, markers.FormatKindRef(gvk))
			}
		}
	}
	for _, h := range api.BuiltinControllers {
		retained(h.Name, h.Pos, h.Controller)
	}
	for _, k := range api.Controllers() {
		retained(k.Name, k.Pos, k.Controller)
		if k.Controller.NamesOwned {
			if _, ok := markers.OwnedNameRule(k.Controller.Owns); !ok {
				b.in.Warnings.Add(k.Pos, "%s has +opgen:controller:namesOwned, but no kind it owns (owns=) asks more of a name than the DNS subdomain every object's name is, so the CRD gets no rule: remove the marker, or list the owned kind named after the object (v1.Service, v1.Namespace, batch/v1.Job or batch/v1.CronJob ask more)", k.Name)
			}
		}
	}
	names := map[string]*Kind{}
	for _, k := range api.Controllers() {
		if prev := names[k.Name]; prev != nil && prev.Version.Group != k.Version.Group {
			b.in.Errors.Add(k.Pos, "duplicate kind: controllers for %s exist in groups %s and %s (%s), and their glue would share names in one controller package; rename one kind", k.Name, k.Version.Group.Name, prev.Version.Group.Name, prev.Pos)
		}
		names[k.Name] = k
	}
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
	if builtin, ok := servedkinds.Kinds(gvk.Group, gvk.Version); ok {
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

// check checks the markers and the field types of pkg. opgen's own marker
// checks run before the collector's errors are added: they replace its
// messages about the same lines.
func (b *apiBuilder) check(pkg *loader.Package, p *pkgRead) {
	b.checkKubebuilderMarkers(pkg)
	if p.controllers {
		b.addCollectorError(p.collectorErr)
		return
	}
	b.checkOpgenMarkers(p.lines, p.kinds, p.collectorErr == nil)
	b.addCollectorError(p.collectorErr)
}
