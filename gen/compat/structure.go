package compat

import (
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// structure compares the keywords that shape how the API server prunes,
// merges and documents a node, rather than which values it takes.
func (c *comparison) structure(p Path, old, cur *apiextensionsv1.JSONSchemaProps) {
	c.listType(p, old, cur)
	c.preserveUnknown(p, old, cur)
	c.additionalProperties(p, old, cur)
	c.composition(p, old, cur)
	if old.Description != cur.Description {
		c.add(Finding{
			Rule: DescriptionChanged, Path: p, Change: "description changed",
			Effect: "nothing stored or served breaks: kubectl explain and the API reference show the new text",
			Fix:    "review the new text as part of the release",
		})
	}
}

func listType(s *apiextensionsv1.JSONSchemaProps) string {
	if s.XListType == nil || *s.XListType == "" {
		return "atomic"
	}
	return *s.XListType
}

// listType reports a list whose x-kubernetes-list-type or list-map-keys
// changed: server-side apply then merges it another way, and set and map
// refuse duplicates.
func (c *comparison) listType(p Path, old, cur *apiextensionsv1.JSONSchemaProps) {
	from, to := listType(old), listType(cur)
	if from != to {
		c.add(Finding{
			Rule: ListTypeChanged, Path: p,
			Change: fmt.Sprintf("x-kubernetes-list-type changed from %s to %s", from, to),
			Effect: listTypeEffect(p, from, to),
			Fix:    "keep the list type (+listType), " + newVersionFix,
		})
		return
	}
	if to != "map" || slices.Equal(sorted(old.XListMapKeys), sorted(cur.XListMapKeys)) {
		return
	}
	c.add(Finding{
		Rule: ListMapKeysChanged, Path: p,
		Change: fmt.Sprintf("x-kubernetes-list-map-keys changed from [%s] to [%s]", strings.Join(old.XListMapKeys, ", "), strings.Join(cur.XListMapKeys, ", ")),
		Effect: fmt.Sprintf("server-side apply tells the items of %s apart by other keys, so an apply matches, keeps or removes other items than before; and new objects, and updates of objects whose items were unique, must have items unique by the new keys", p),
		Fix:    "keep the keys (+listMapKey), " + newVersionFix,
	})
}

func listTypeEffect(p Path, from, to string) string {
	merge := fmt.Sprintf("server-side apply merges %s another way: ", p)
	switch to {
	case "atomic":
		merge += "it now replaces the whole list, so one field manager's apply removes the items that others added"
	case "set":
		merge += "it now merges the items by value"
	default:
		merge += "it now merges the items by their keys"
	}
	if to == "atomic" {
		return merge
	}
	return merge + fmt.Sprintf("; and the API server refuses duplicate items in new objects and in updates of objects whose %s had none (objects that hold duplicates stay writable while they do)", p)
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// nullable reports a field that took null and no longer does.
func (c *comparison) nullable(p Path, old, cur *apiextensionsv1.JSONSchemaProps) {
	if !old.Nullable || cur.Nullable {
		return
	}
	c.add(Finding{
		Rule: NullableRemoved, Path: p, Change: "nullable removed",
		Effect: fmt.Sprintf("the API server drops a null %s from the objects it reads and from the writes it takes (the default, if there is one, takes its place), so objects stored with null lose it at their next write, and clients that write null to mean something else than absent are no longer heard", p),
		Fix:    "keep +nullable, " + newVersionFix,
	})
}

// preserveUnknown reports a node that kept fields its schema does not
// name, and now prunes them.
func (c *comparison) preserveUnknown(p Path, old, cur *apiextensionsv1.JSONSchemaProps) {
	if !preserves(old) || preserves(cur) {
		return
	}
	c.add(Finding{
		Rule: PreserveUnknownFieldsRemoved, Path: p, Change: "x-kubernetes-preserve-unknown-fields removed",
		Effect: fmt.Sprintf("the API server prunes the fields the schema of %s does not name from the objects it reads from storage, so the values stored objects hold under other names are lost at their next write, and clients that still send them have them dropped", p),
		Fix:    "keep +kubebuilder:pruning:PreserveUnknownFields, " + newVersionFix,
	})
}

func preserves(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}

// additionalProperties reports a map that no longer takes any key.
func (c *comparison) additionalProperties(p Path, old, cur *apiextensionsv1.JSONSchemaProps) {
	if !anyKey(old) || anyKey(cur) || preserves(cur) {
		return
	}
	c.add(Finding{
		Rule: AdditionalPropertiesRemoved, Path: p, Change: "additionalProperties removed: the map takes only the keys its properties name",
		Effect: fmt.Sprintf("the API server prunes the keys of %s that properties do not name from the objects it reads from storage, so stored values under other keys are lost at their next write", p),
		Fix:    "keep the map type, and add a field beside it for what the properties hold, " + newVersionFix,
	})
}

func anyKey(s *apiextensionsv1.JSONSchemaProps) bool {
	a := s.AdditionalProperties
	return a != nil && (a.Allows || a.Schema != nil)
}

// composition reports anyOf, oneOf, allOf or not added or changed: value
// checks opgen cannot compare, so any new one is stricter.
func (c *comparison) composition(p Path, old, cur *apiextensionsv1.JSONSchemaProps) {
	keywords := []struct {
		name     string
		old, cur any
		empty    bool
	}{
		{"allOf", old.AllOf, cur.AllOf, len(cur.AllOf) == 0},
		{"anyOf", old.AnyOf, cur.AnyOf, len(cur.AnyOf) == 0},
		{"oneOf", old.OneOf, cur.OneOf, len(cur.OneOf) == 0},
		{"not", old.Not, cur.Not, cur.Not == nil},
	}
	var changes []string
	for _, k := range keywords {
		if k.empty || sameValue(k.old, k.cur) {
			continue
		}
		verb := "changed"
		if isEmpty(k.old) {
			verb = "added"
		}
		changes = append(changes, k.name+" "+verb)
	}
	if len(changes) == 0 {
		return
	}
	c.add(Finding{
		Rule: CompositionChanged, Path: p,
		Change: strings.Join(changes, ", ") + " (opgen cannot tell whether the new checks are looser)",
		Effect: ratcheted(p),
		Fix:    "keep the released checks, " + newVersionFix,
	})
}
