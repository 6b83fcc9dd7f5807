package cachefill

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
)

// Spec is what a cache keeps of its objects' spec, by JSON name: a member
// it names with a nil Spec is kept whole, one it names with a Spec is
// kept as that Spec keeps it, and one it does not name is dropped.
type Spec map[string]Spec

// NewSpec returns the Spec that keeps paths, each a dotted path of JSON
// names below spec as +opgen:controller:cacheSpec takes them ("image",
// "template.metadata"). A path that names a member whole wins over the
// longer paths below it. No paths keep nothing.
func NewSpec(paths []string) (Spec, error) {
	s := Spec{}
	for _, p := range paths {
		names := strings.Split(p, ".")
		if slices.Contains(names, "") {
			return nil, fmt.Errorf("%q is not a dotted path of JSON names", p)
		}
		at := s
		for i, name := range names {
			if i == len(names)-1 {
				at[name] = nil // whole
				break
			}
			sub, named := at[name]
			if named && sub == nil {
				break // already whole
			}
			if !named {
				sub = Spec{}
				at[name] = sub
			}
			at = sub
		}
	}
	return s, nil
}

// specKey marks a context whose cache keeps only part of each spec.
type specKey struct{}

// KeepSpec returns ctx marked so that the filter keeps, of the spec of
// each object in the lists and watches made under it, only what s keeps:
// what a controller's projection would zero after the decode is then
// never decoded. The filter works on JSON only; the projection after the
// decode stays the rule.
func KeepSpec(ctx context.Context, s Spec) context.Context {
	return context.WithValue(ctx, specKey{}, s)
}

// keptSpec returns what the request context ctx keeps of spec, or nil:
// all of it.
func keptSpec(ctx context.Context) Spec {
	s, _ := ctx.Value(specKey{}).(Spec)
	return s
}

// comma joins two members kept with dropped ones between them.
var comma = []byte{','}

// specEdits adds the edits that drop from the JSON object v[i:end] the
// members keep does not name, and from the members it keeps in part what
// their own Spec drops. A member whose key holds an escape is kept: the
// filter may keep more than the projection, never less. Nothing is added
// when the object is not well-formed.
func specEdits(edits []edit, v []byte, i, end int, keep Spec) []edit {
	n0 := len(edits)
	from := i + 1 // end of what is kept so far: after '{' or a kept member
	kept, dropped := 0, false
	ok := members(v, i, func(key []byte, ks, vs, ve int) bool {
		sub, named := keep[string(key)]
		if !named && bytes.IndexByte(key, '\\') < 0 {
			dropped = true
			return true
		}
		if dropped {
			sep := comma
			if kept == 0 {
				sep = nil
			}
			edits = append(edits, edit{from, ks, sep})
			dropped = false
		}
		if sub != nil && v[vs] == '{' {
			edits = specEdits(edits, v, vs, ve, sub)
		}
		kept++
		from = ve
		return true
	})
	if !ok || end <= i || v[end-1] != '}' {
		return edits[:n0]
	}
	if dropped {
		edits = append(edits, edit{from, end - 1, nil})
	}
	return edits
}
