package plug

import (
	"encoding/json"
	"reflect"
	"strings"
)

// fill adds to the decoded status d the zero values of the fields the
// cached status c sets and d leaves out (omitempty left them out: false,
// 0, "", an empty list or map), so that the operator's write owns them and
// overrides whoever set them. t is the Go type of the status. Pointers and
// types with a JSON form of their own (a time) stay out: their zero value
// says "unset", not false or 0. It reports whether it added any.
func fill(d, c map[string]any, t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return false
	}
	added := false
	for k, cv := range c {
		f, ok := jsonField(t, k)
		if !ok {
			continue
		}
		dv, has := d[k]
		if !has {
			if z, ok := zeroJSON(f.Type); ok {
				d[k] = z
				added = true
			}
			continue
		}
		dm, ok1 := dv.(map[string]any)
		cm, ok2 := cv.(map[string]any)
		if ok1 && ok2 && fill(dm, cm, f.Type) {
			added = true
		}
	}
	return added
}

var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

// zeroJSON is the JSON of the zero value of t that says "nothing", or
// false when t's zero says "unset" instead.
func zeroJSON(t reflect.Type) (any, bool) {
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
		return nil, false
	}
	switch t.Kind() {
	case reflect.Bool:
		return false, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return json.Number("0"), true // as decodeObject decodes a 0
	case reflect.String:
		return "", true
	case reflect.Slice, reflect.Array:
		return []any{}, true
	case reflect.Map:
		return map[string]any{}, true
	}
	return nil, false
}

// jsonField finds the field of struct t whose JSON name is name, in t's
// embedded structs too (inlined, as encoding/json does).
func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		if f.Anonymous && tag == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if inner, ok := jsonField(ft, name); ok {
					return inner, true
				}
			}
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
