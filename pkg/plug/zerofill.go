package plug

import (
	"encoding/json"
	"reflect"
	"strings"
)

// zeroFilled returns the status JSON desired with the fields the cached
// status sets and desired leaves out (omitempty left them out: false, 0,
// "", an empty list or map) set to those zero values, so that the
// operator's apply owns them and overrides whoever set them. t is the Go
// type of the status. Pointers and types with a JSON form of their own
// (a time) stay out: their zero value says "unset", not false or 0.
func zeroFilled(desired, cached []byte, t reflect.Type) ([]byte, error) {
	var d, c map[string]any
	if err := json.Unmarshal(desired, &d); err != nil || d == nil {
		return desired, nil // not an object: nothing to fill
	}
	if err := json.Unmarshal(cached, &c); err != nil || c == nil {
		return desired, nil
	}
	if !fill(d, c, t) {
		return desired, nil
	}
	return json.Marshal(d)
}

// fill adds to d the zero values of the fields c has and d lacks, in the
// struct type t; it reports whether it added any.
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
		return 0, true
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
