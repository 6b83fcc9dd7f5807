package cachefill

import (
	"bytes"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// appendFiltered appends v, one JSON object, to dst without the
// managedFields entries the caches drop and, when keep is set, without
// what keep drops of each object's spec: v is a list (its items are
// filtered), a watch event (its object is) or an object. dst may share v's
// array if it ends at or before v's start: the output never runs ahead of
// the input it comes from.
func (f *Filter) appendFiltered(dst, v []byte, keep Spec) []byte {
	var edits []edit
	ok := members(v, 0, func(key []byte, ks, vs, ve int) bool {
		switch {
		case string(key) == "items" && v[vs] == '[':
			return elements(v, vs, func(es, ee int) bool {
				if v[es] == '{' {
					edits = f.objectEdits(edits, v, es, keep)
				}
				return true
			})
		case string(key) == "object" && v[vs] == '{':
			edits = f.objectEdits(edits, v, vs, keep)
		case string(key) == "metadata" && v[vs] == '{':
			edits = f.metadataEdits(edits, v, vs)
		case string(key) == "spec" && v[vs] == '{' && keep != nil:
			edits = specEdits(edits, v, vs, ve, keep)
		}
		return true
	})
	if !ok || len(edits) == 0 {
		return append(dst, v...)
	}
	last := 0
	for _, e := range edits {
		dst = append(dst, v[last:e.start]...)
		dst = append(dst, e.with...)
		last = e.end
	}
	return append(dst, v[last:]...)
}

// edit replaces v[start:end] with with.
type edit struct {
	start, end int
	with       []byte
}

// objectEdits adds the edits of the object at v[i:]: of its metadata and,
// when keep is set, of its spec. It reads no further than those.
func (f *Filter) objectEdits(edits []edit, v []byte, i int, keep Spec) []edit {
	left := 1 // members still to filter
	if keep != nil {
		left = 2
	}
	members(v, i, func(key []byte, _, vs, ve int) bool {
		switch {
		case string(key) == "metadata" && v[vs] == '{':
			edits = f.metadataEdits(edits, v, vs)
			left--
		case string(key) == "spec" && v[vs] == '{' && keep != nil:
			edits = specEdits(edits, v, vs, ve, keep)
			left--
		}
		return left > 0
	})
	return edits
}

// metadataEdits adds the edit of the managedFields of the metadata object
// at v[i:]: the list without the dropped entries, or no member at all when
// no entry stays.
func (f *Filter) metadataEdits(edits []edit, v []byte, i int) []edit {
	if !f.fields {
		return edits
	}
	prevEnd := -1 // end of the previous member's value
	var drop *edit
	members(v, i, func(key []byte, ks, vs, ve int) bool {
		if drop != nil { // the dropped member was the first: cut up to this one
			drop.end = ks
			return false
		}
		if string(key) != "managedFields" || v[vs] != '[' {
			prevEnd = ve
			return true
		}
		with, kept := f.entries(v[vs:ve])
		switch {
		case kept:
			edits = append(edits, edit{vs, ve, with})
			return false
		case prevEnd >= 0: // cut from the comma after the previous member
			edits = append(edits, edit{prevEnd, ve, nil})
			return false
		default:
			edits = append(edits, edit{ks, ve, nil})
			drop = &edits[len(edits)-1]
			return true
		}
	})
	return edits
}

// entries returns the managedFields list arr without what the caches drop,
// and whether any entry stays.
func (f *Filter) entries(arr []byte) ([]byte, bool) {
	heads := f.heads.Load()
	out := make([]byte, 0, 256)
	out = append(out, '[')
	n := 0
	elements(arr, 0, func(es, ee int) bool {
		if arr[es] != '{' {
			return true
		}
		var manager, operation, subresource []byte
		var fields [2][2]int // fieldsType and fieldsV1: key start, value end
		nf := 0
		members(arr, es, func(key []byte, ks, vs, ve int) bool {
			switch string(key) {
			case "manager":
				manager = arr[vs:ve]
			case "operation":
				operation = arr[vs:ve]
			case "subresource":
				subresource = arr[vs:ve]
			case "fieldsType", "fieldsV1":
				if nf < 2 {
					fields[nf] = [2]int{ks, ve}
					nf++
				}
			}
			return true
		})
		own := f.isManager(manager) && string(operation) == `"`+string(metav1.ManagedFieldsOperationApply)+`"` && (subresource == nil || string(subresource) == `""`)
		if !own && !heads {
			return true
		}
		if n > 0 {
			out = append(out, ',')
		}
		n++
		if own || nf == 0 {
			out = append(out, arr[es:ee]...)
			return true
		}
		// the entry without its field set
		out = append(out, '{')
		first := true
		members(arr, es, func(key []byte, ks, vs, ve int) bool {
			if string(key) == "fieldsType" || string(key) == "fieldsV1" {
				return true
			}
			if !first {
				out = append(out, ',')
			}
			first = false
			out = append(out, arr[ks:ve]...)
			return true
		})
		out = append(out, '}')
		return true
	})
	out = append(out, ']')
	return out, n > 0
}

// isManager reports whether the JSON string s is the operator's name.
func (f *Filter) isManager(s []byte) bool {
	if bytes.Equal(s, f.manager) {
		return true
	}
	if bytes.IndexByte(s, '\\') < 0 {
		return false
	}
	var name string
	return json.Unmarshal(s, &name) == nil && name == f.name
}
