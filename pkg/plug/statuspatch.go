package plug

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// statusWrite returns what writes the status desired over the cached one,
// both JSON of the status of Go type t. desired is first zero-filled (see
// fill): the fields the cached status sets and desired leaves out are set
// to their zero values. Then, when merge is true, body is the JSON merge
// patch {"status": {...}} that changes the cached status into that: the
// values it changes or adds, and null for the fields it leaves out (a
// pointer left nil). Otherwise body is the status to apply whole: when a
// list changed (an apply merges a list by its keys and keeps the entries
// of other managers; a merge patch would replace it whole), desired holds
// a null, or nothing changed. Both are decoded once, numbers kept as
// written (an int64 above 2^53 would not survive a float64).
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
func statusWrite(desired, cached []byte, t reflect.Type) (body []byte, merge bool, err error) {
	d, dok := decodeObject(desired)
	c, cok := decodeObject(cached)
	if !dok || !cok {
		return desired, false, nil // not objects: nothing to fill or diff
	}
	filled := fill(d, c, t)
	if diff, ok := mergeDiff(d, c); ok && len(diff) > 0 {
		body, err = json.Marshal(map[string]any{"status": diff})
		return body, true, err
	}
	if !filled {
		return desired, false, nil
	}
	body, err = json.Marshal(d)
	return body, false, err
}

// decodeObject decodes a JSON object, keeping numbers as written.
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
// statusWrite).
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
