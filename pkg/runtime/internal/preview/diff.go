package preview

import (
	"cmp"
	"reflect"
	"regexp"
	"slices"
	"strconv"
)

// Field is one field a write would change: its path, its value before
// (absent for a new field) and after (absent for a removed one). Maps are
// compared field by field, lists as a whole.
type Field struct {
	Path   string `json:"path"`
	Before any    `json:"before,omitempty"`
	After  any    `json:"after,omitempty"`
}

// ignored are the fields every write changes, or a dry run makes up, and
// that say nothing about what the operator would change: the resource
// version, the managed fields and the generation (which a spec change
// bumps, and the spec's own fields show). The UID and the creation time of
// an object cannot change; a dry-run create makes up both. The report
// names the object with its apiVersion and kind.
var ignored = map[string]bool{
	"apiVersion":                 true, // the object's identity says them
	"kind":                       true,
	"metadata.resourceVersion":   true,
	"metadata.managedFields":     true,
	"metadata.generation":        true,
	"metadata.uid":               true,
	"metadata.creationTimestamp": true,
}

// Diff returns the fields whose values differ between before and after,
// JSON objects as encoding/json decodes them (nil for an object that does
// not exist), sorted by path. A null value counts as absent.
func Diff(before, after map[string]any) []Field {
	b, a := map[string]any{}, map[string]any{}
	flatten(before, "", b)
	flatten(after, "", a)
	var out []Field
	for p, bv := range b {
		if av, ok := a[p]; !ok || !reflect.DeepEqual(bv, av) {
			out = append(out, Field{Path: p, Before: bv, After: a[p]})
		}
	}
	for p, av := range a {
		if _, ok := b[p]; !ok {
			out = append(out, Field{Path: p, After: av})
		}
	}
	slices.SortFunc(out, func(x, y Field) int { return cmp.Compare(x.Path, y.Path) })
	return out
}

// flatten puts the leaves of obj under prefix into out: every value but a
// non-empty map, which it enters.
func flatten(obj map[string]any, prefix string, out map[string]any) {
	for k, v := range obj {
		p := join(prefix, k)
		if ignored[p] || v == nil {
			continue
		}
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			flatten(m, p, out)
			continue
		}
		out[p] = v
	}
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// join appends key to path: .key, or ["key"] when key holds dots, slashes
// or other characters (labels and annotations: metadata.labels["app.kubernetes.io/name"]).
func join(path, key string) string {
	if !plainKey.MatchString(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}
