package compat

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// compared are the keywords of a schema node that a rule compares, or
// that change nothing stored or served. A change of any other keyword
// (multipleOf, x-kubernetes-map-type, x-kubernetes-embedded-resource, a
// keyword a later Kubernetes adds) is an unknown change: the gate fails
// closed on it.
var compared = []string{
	"description", "title", "example", "externalDocs",
	"type", "format", "x-kubernetes-int-or-string", "default", "enum",
	"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
	"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
	"pattern", "x-kubernetes-validations", "required", "properties", "items", "additionalProperties",
	"nullable", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
	"allOf", "anyOf", "oneOf", "not",
}

// unknown reports the keywords of a node that changed and that no rule
// compares.
func (c *comparison) unknown(p Path, old, cur *apiextensionsv1.JSONSchemaProps) {
	if changes := changedKeys(old, cur, compared); len(changes) > 0 {
		c.add(unknownChange(p, changes))
	}
}

// versionCompared are the fields of a CRD version that a rule compares
// (schema), or that break nothing (printer columns, deprecation, served
// and storage, which versionRemoved judges).
var versionCompared = []string{"name", "served", "storage", "deprecated", "deprecationWarning", "schema", "additionalPrinterColumns"}

// namesCompared are the fields of a CRD's names that cannot change
// without another CRD (kind, plural), or break nothing.
var namesCompared = []string{"kind", "plural"}

// unknownVersion reports the fields of a version, such as its
// subresources, that changed and that no rule compares.
func (c *comparison) unknownVersion(old, cur *apiextensionsv1.CustomResourceDefinitionVersion) {
	if changes := changedKeys(old, cur, versionCompared); len(changes) > 0 {
		c.add(unknownChange(nil, changes))
	}
}

// unknownNames reports a change of the CRD's other names: its singular,
// list kind, or a short name or category removed, which kubectl users
// type. A new short name or category breaks no one.
func (c *comparison) unknownNames(old, cur *apiextensionsv1.CustomResourceDefinitionNames) {
	kept := cur.DeepCopy()
	kept.ShortNames = keptOf(old.ShortNames, cur.ShortNames)
	kept.Categories = keptOf(old.Categories, cur.Categories)
	if changes := changedKeys(old, kept, namesCompared); len(changes) > 0 {
		c.add(unknownChange(nil, prefixed("names.", changes)))
	}
}

// keptOf returns the values of old that cur still has, in old's order.
func keptOf(old, cur []string) []string {
	var out []string
	for _, v := range old {
		if slices.Contains(cur, v) {
			out = append(out, v)
		}
	}
	return out
}

func unknownChange(p Path, changes []string) Finding {
	return Finding{
		Rule: UnknownChange, Path: p,
		Change: strings.Join(changes, ", ") + ", a change the gate has no rule for",
		Effect: "opgen cannot tell what it does to the objects of the last release or their clients, so the gate fails closed",
		Fix:    "undo it, or try it on a cluster that holds objects of the last release (opgen release --live checks them) and acknowledge it",
	}
}

func prefixed(prefix string, list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = prefix + s
	}
	return out
}

// changedKeys describes the JSON keys of old and cur, other than skip,
// whose values differ.
func changedKeys(old, cur any, skip []string) []string {
	o, n := jsonFields(old), jsonFields(cur)
	keys := map[string]bool{}
	for k := range o {
		keys[k] = true
	}
	for k := range n {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		if !slices.Contains(skip, k) && !reflect.DeepEqual(o[k], n[k]) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, k := range names {
		out[i] = describeChange(k, o[k], n[k])
	}
	return out
}

func describeChange(key string, old, cur any) string {
	switch {
	case old == nil:
		return fmt.Sprintf("%s %s added", key, short(cur))
	case cur == nil:
		return fmt.Sprintf("%s %s removed", key, short(old))
	}
	return fmt.Sprintf("%s changed from %s to %s", key, short(old), short(cur))
}

// short is a value as compact JSON, cut at 60 bytes.
func short(v any) string {
	data, _ := json.Marshal(v)
	if len(data) > 60 {
		return string(data[:57]) + "..."
	}
	return string(data)
}

// jsonFields is v as a JSON object, its values decoded.
func jsonFields(v any) map[string]any {
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return out
}

// sameValue reports whether a and b encode to the same JSON.
func sameValue(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// isEmpty reports whether v encodes to null, [] or {}.
func isEmpty(v any) bool {
	data, _ := json.Marshal(v)
	s := string(data)
	return s == "null" || s == "[]" || s == "{}"
}
