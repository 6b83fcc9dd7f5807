package gen

// The model's checks: what the markers and the kinds say that cannot be.

import (
	"fmt"
	"go/token"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/opgen-sdk/opgen/gen/internal/apikinds"
	"github.com/opgen-sdk/opgen/gen/markers"
)

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
