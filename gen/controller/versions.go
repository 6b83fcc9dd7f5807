package controller

import (
	"slices"
	"strings"

	"github.com/opgen-sdk/opgen/gen/model"

	"github.com/dave/jennifer/jen"
	"k8s.io/apimachinery/pkg/version"

	"github.com/opgen-sdk/opgen/gen"
	"github.com/opgen-sdk/opgen/gen/markers"
)

// Controllers per version
//
// A kind may have a controller in several of its API versions when every
// one carries the same +opgen:controller:dispatch (see markers.Dispatch).
// The glue then registers one controller per version, each watching its
// own version's endpoint through the generated clientset (the API server
// converts), and gives each the same runtime.VersionDispatch, which sends
// each object to exactly one of them. The oldest version's glue keeps the
// kind's names (WidgetController, SetupWidget); the others add the version
// (WidgetV2Controller, SetupWidgetV2, NewWidgetV2Controller), so that
// adding a newer version's controller leaves the existing one as it was.
// RBAC does not change: the versions share the resource.

// siblings returns the kinds of k's group named like k that have a
// controller, k included, oldest version first.
func siblings(k *model.Kind) []*model.Kind {
	if k.Version == nil || k.Version.Group == nil {
		return []*model.Kind{k}
	}
	var out []*model.Kind
	for _, v := range k.Version.Group.Versions {
		for _, o := range v.Kinds {
			if o.Name == k.Name && o.Controller != nil {
				out = append(out, o)
			}
		}
	}
	if len(out) == 0 {
		return []*model.Kind{k}
	}
	slices.SortFunc(out, func(a, b *model.Kind) int {
		return version.CompareKubeAwareVersionStrings(a.Version.Name, b.Version.Name)
	})
	return out
}

// GlueName is the name the glue gives the controller of k: the kind's
// name, with the version appended when an older version of the kind has
// a controller too (WidgetV2).
func GlueName(k *model.Kind) string {
	if s := siblings(k); len(s) > 1 && s[0] != k {
		return VersionedName(k.Name, k.Version.Name)
	}
	return k.Name
}

// VersionedName is the glue name of kind's controller in version when an
// older version has one too.
func VersionedName(kind, version string) string { return kind + upperFirst(version) }

// describe names k's controller in comments: Widget, or Widget v2 when
// the glue name carries the version.
func describe(k *model.Kind) string {
	if GlueName(k) != k.Name {
		return k.Name + " " + k.Version.Name
	}
	return k.Name
}

// dispatch returns the fields of the runtime.VersionDispatch of k, or nil
// when k has a controller in one version only.
func dispatch(k *model.Kind) jen.Code {
	s := siblings(k)
	if len(s) < 2 {
		return nil
	}
	var versions []jen.Code
	for _, o := range s {
		versions = append(versions, jen.Lit(o.Version.Name))
	}
	kv := []any{"Versions", jen.Index().String().Values(versions...)}
	def := k.Controller.Dispatch
	if def == markers.DispatchWritten {
		kv = append(kv, "Written", jen.True())
		def = writtenDefault(s)
	}
	kv = append(kv, "Default", jen.Lit(def))
	return jen.Op("&").Qual(runtimePkg, "VersionDispatch").Add(fields(false, kv...))
}

// writtenDefault is the version whose controller takes the objects that
// dispatch=written does not place: the storage version's, else the
// oldest's.
func writtenDefault(s []*model.Kind) string {
	for _, o := range s {
		if o.Storage {
			return o.Version.Name
		}
	}
	return s[0].Version.Name
}

// checkDispatch reports dispatch markers that cannot work: on a kind with
// one controller, different on two versions, naming a version without a
// controller, and controllers on versions that are not served. It returns
// false when it reported an error.
func checkDispatch(ctx *gen.Context, kinds []*model.Kind) bool {
	before := ctx.Errors.Len()
	for _, k := range kinds {
		s := siblings(k)
		if k.Controller.Dispatch == "" {
			continue // one controller, or the API model reported the missing rule
		}
		at := markerPos(ctx, k.Pos, "+opgen:controller:dispatch=", k.Controller.Dispatch)
		if len(s) == 1 {
			ctx.Errors.Add(at, "%s: +opgen:controller:dispatch=%s shares the objects of a kind between the controllers of several versions, and %s has one, in %s: drop the marker, or add +opgen:controller to another version (opgen create api --version <version> --kind %s --controller)", k.Name, k.Controller.Dispatch, k.Name, k.Version.Name, k.Name)
			continue
		}
		if s[0] != k {
			continue // the oldest version checks the rest
		}
		checkSiblings(ctx, s)
	}
	return ctx.Errors.Len() == before
}

// checkSiblings checks the controllers of one kind in several versions,
// oldest first.
func checkSiblings(ctx *gen.Context, s []*model.Kind) {
	first := s[0]
	var versions []string
	for _, o := range s {
		versions = append(versions, o.Version.Name)
		if o.Controller.Dispatch == "" {
			return
		}
		if o.Controller.Dispatch != first.Controller.Dispatch {
			ctx.Errors.Add(markerPos(ctx, o.Pos, "+opgen:controller:dispatch=", o.Controller.Dispatch), "%s %s: +opgen:controller:dispatch=%s, but %s says dispatch=%s (%s): give the type in every version the same rule", o.Name, o.Version.Name, o.Controller.Dispatch, first.Version.Name, first.Controller.Dispatch, markerPos(ctx, first.Pos, "+opgen:controller:dispatch=", first.Controller.Dispatch))
		}
		if o.Unserved {
			at, _ := ctx.DocMarker(o.Pos, model.IsMarker("+kubebuilder:unservedversion"))
			ctx.Errors.Add(at, "%s %s has +opgen:controller but is not served (+kubebuilder:unservedversion), so its controller could not watch it: serve the version, or drop its +opgen:controller", o.Name, o.Version.Name)
		}
	}
	named := first.Controller.Dispatch
	if named == markers.DispatchWritten || slices.Contains(versions, named) {
		return
	}
	for _, o := range s {
		if o.Controller.Dispatch == named {
			ctx.Errors.Add(markerPos(ctx, o.Pos, "+opgen:controller:dispatch=", named), "%s %s: +opgen:controller:dispatch=%s names %s, %s: name one of the versions with a controller (%s), or write dispatch=written", o.Name, o.Version.Name, named, named, why(first, named), strings.Join(versions, ", "))
		}
	}
}

// why says what is wrong with version for a dispatch of k's kind.
func why(k *model.Kind, version string) string {
	for _, v := range k.Version.Group.Versions {
		if v.Name != version {
			continue
		}
		for _, o := range v.Kinds {
			if o.Name != k.Name {
				continue
			}
			if o.Unserved {
				return "which is not served (+kubebuilder:unservedversion)"
			}
			return "whose " + k.Name + " has no +opgen:controller"
		}
		return "which has no " + k.Name
	}
	return "which " + k.Version.Group.Name + " does not declare"
}
