package plug

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// statusMergePatch returns the JSON merge patch {"status": {...}} that
// changes the cached status into applied: the values applied changes or
// adds, and null for the fields it left out (a pointer left nil). ok is
// false when a list changed (an apply merges a list by its keys and keeps
// the entries of other managers; a merge patch would replace it whole) or
// applied holds a null, and then the status is applied whole.
//
// Removals go by merge patch, not by apply: an apply removes only the
// fields its manager owns by apply, and a field the last merge patch set
// is owned by the operator's update, so an apply would leave it.
//
// Such a patch costs the API server less than an apply of the whole
// status: it merges a few fields instead of building the field sets of
// the whole status, which the server-side apply benchmark measures (see
// bench/README.md, "Status writes"). It is what a steady operator writes
// most: a counter, a timestamp, an observed generation.
func statusMergePatch(applied, cached []byte) (patch []byte, ok bool) {
	a, aok := decodeObject(applied)
	c, cok := decodeObject(cached)
	if !aok || !cok {
		return nil, false
	}
	diff, ok := mergeDiff(a, c)
	if !ok || len(diff) == 0 {
		return nil, false
	}
	patch, err := json.Marshal(map[string]any{"status": diff})
	return patch, err == nil
}

// decodeObject decodes a JSON object, keeping numbers as written (an
// int64 above 2^53 would not survive a float64).
func decodeObject(data []byte) (map[string]any, bool) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

// mergeDiff returns the keys of a whose values differ from c's, objects
// diffed key by key; ok is false when a merge patch cannot say it (see
// statusMergePatch).
func mergeDiff(a, c map[string]any) (diff map[string]any, ok bool) {
	diff = map[string]any{}
	for k := range c {
		if _, has := a[k]; !has {
			diff[k] = nil // removed
		}
	}
	for k, av := range a {
		cv, has := c[k]
		if has && reflect.DeepEqual(av, cv) {
			continue
		}
		switch av := av.(type) {
		case nil, []any:
			return nil, false // null deletes in a merge patch; lists merge by key in an apply
		case map[string]any:
			cm, isMap := cv.(map[string]any)
			if !isMap {
				if _, isList := cv.([]any); isList {
					return nil, false
				}
				if !has {
					diff[k] = av
					continue
				}
				return nil, false // a scalar turned object: let the apply decide
			}
			sub, ok := mergeDiff(av, cm)
			if !ok {
				return nil, false
			}
			diff[k] = sub
		default:
			if _, isList := cv.([]any); isList {
				return nil, false
			}
			if _, isMap := cv.(map[string]any); isMap {
				return nil, false
			}
			diff[k] = av
		}
	}
	return diff, true
}
