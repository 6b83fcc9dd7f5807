package cachefill

import (
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// internMax is the longest string intern shares: longer ones (a
// last-applied-configuration annotation) are rarely repeated and cost more
// to hash than they would save.
const internMax = 128

// internTableMax bounds the intern table: when it is full it starts over,
// so strings of deleted objects and strings seen once (names, UIDs) are not
// kept for good; strings that repeat are back in it at their next sight.
const internTableMax = 1 << 14

// interned is the process's intern table: the transforms of every informer
// share it.
var interned struct {
	sync.Mutex
	m map[string]string
}

// intern returns the copy of s that the cached objects share, and makes s
// that copy when there is none: a hit costs a map lookup and no
// allocation.
func intern(s string) string {
	if s == "" || len(s) > internMax {
		return s
	}
	interned.Lock()
	c, ok := interned.m[s]
	if !ok {
		switch {
		case interned.m == nil:
			interned.m = make(map[string]string, 1024)
		case len(interned.m) >= internTableMax:
			clear(interned.m) // keeps its buckets: no allocation
		}
		interned.m[s] = s
		c = s
	}
	interned.Unlock()
	return c
}

// internMeta replaces the strings that repeat from object to object in m's
// metadata (namespace, label and annotation keys and values, owner
// reference kinds, managedFields heads) by shared copies. The values do
// not change: a handler sees the same object.
func internMeta(m metav1.Object) {
	m.SetNamespace(intern(m.GetNamespace()))
	if l := m.GetLabels(); len(l) > 0 {
		m.SetLabels(internMap(l))
	}
	if a := m.GetAnnotations(); len(a) > 0 {
		m.SetAnnotations(internMap(a))
	}
	if refs := m.GetOwnerReferences(); len(refs) > 0 {
		for i := range refs {
			refs[i].APIVersion = intern(refs[i].APIVersion)
			refs[i].Kind = intern(refs[i].Kind)
		}
		m.SetOwnerReferences(refs)
	}
	if entries := m.GetManagedFields(); len(entries) > 0 {
		for i := range entries {
			e := &entries[i]
			e.Manager, e.APIVersion, e.FieldsType, e.Subresource = intern(e.Manager), intern(e.APIVersion), intern(e.FieldsType), intern(e.Subresource)
			e.Operation = metav1.ManagedFieldsOperationType(intern(string(e.Operation)))
		}
		m.SetManagedFields(entries)
	}
}

// internMap returns m with its keys and values interned.
func internMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[intern(k)] = intern(v)
	}
	return out
}

var objectMetaType = reflect.TypeFor[metav1.ObjectMeta]()

// Intern shares the strings of the object obj points to with the other
// cached objects: its metadata's (internMeta) and every other exported
// string field, through pointers, slices, arrays and maps. The values do
// not change.
func Intern(obj any) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	internValue(v.Elem(), 0)
}

func internValue(v reflect.Value, depth int) {
	if depth > 32 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); s != "" && len(s) <= internMax && v.CanSet() {
			v.SetString(intern(s))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			internValue(v.Elem(), depth+1)
		}
	case reflect.Struct:
		if v.Type() == objectMetaType {
			if v.CanAddr() {
				internMeta(v.Addr().Interface().(*metav1.ObjectMeta))
			}
			return
		}
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				internValue(f, depth+1)
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			internValue(v.Index(i), depth+1)
		}
	case reflect.Map:
		// map[string]string values in place (rebuilding the map to share
		// its keys too costs more than it saves); other maps are left alone
		if m, ok := v.Interface().(map[string]string); ok && v.CanSet() {
			for k, e := range m {
				m[k] = intern(e)
			}
		}
	}
}
