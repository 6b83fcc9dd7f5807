package cachefill

import (
	"hash/maphash"
	"maps"
	"reflect"
	"strings"
	"sync"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// internMax is the longest annotation value intern shares: longer ones (a
// last-applied-configuration) are rarely repeated.
const internMax = 128

// internLongMax is the longest string intern shares elsewhere: a
// description, a script or a certificate bundle repeats across objects
// as often as a short value does.
const internLongMax = 4 << 10

// The tables bound what they keep: when one is full it starts over, so
// what deleted objects held is not kept for good, and what repeats is
// back at its second sight after that.
const (
	internTableMax   = 1 << 14 // strings
	internTableBytes = 4 << 20 // their bytes
	sharedMapsMax    = 1 << 12 // maps
	sharedMapMax     = 32      // the entries of a map shared
	seenOnceMax      = 1 << 14 // hashes of what was seen once
)

// tables are the process's tables of what cached objects share: the
// transforms of every informer use them. A string or a map goes in at
// its second sight; at its first only its hash is kept, so that what no
// other object holds (a name, a UID, a map with the object's name in it)
// neither fills the tables nor stays in them after its object is gone.
var tables struct {
	sync.Mutex
	strs     map[string]string
	strBytes int
	maps     map[uint64]map[string]string
	slices   map[uint64]reflect.Value
	once     map[uint64]struct{}
}

var seed = maphash.MakeSeed()

// seenBefore records h and reports whether it was recorded before; a
// hash seen before is forgotten, its value goes into a table. Called
// with tables locked.
func seenBefore(h uint64) bool {
	if _, ok := tables.once[h]; ok {
		delete(tables.once, h)
		return true
	}
	switch {
	case tables.once == nil:
		tables.once = make(map[uint64]struct{}, 1024)
	case len(tables.once) >= seenOnceMax:
		clear(tables.once) // keeps its buckets: no allocation
	}
	tables.once[h] = struct{}{}
	return false
}

// intern returns the copy of s that the cached objects share, or s when
// there is none: at the second sight of s, a copy of s goes into the
// table. A hit costs a map lookup and no allocation. Strings longer than
// limit are returned as they are.
func intern(s string, limit int) string {
	c, _ := internOwn(s, limit)
	return c
}

// internOwn is intern, and reports whether s is returned, held by no
// table: the object's own.
func internOwn(s string, limit int) (c string, isOwn bool) {
	if s == "" || len(s) > limit {
		return s, true
	}
	tables.Lock()
	defer tables.Unlock()
	if c, ok := tables.strs[s]; ok {
		return c, false
	}
	if !seenBefore(maphash.String(seed, s)) {
		return s, true
	}
	switch {
	case tables.strs == nil:
		tables.strs = make(map[string]string, 1024)
	case len(tables.strs) >= internTableMax || tables.strBytes+len(s) > internTableBytes:
		clear(tables.strs)
		tables.strBytes = 0
	}
	c = strings.Clone(s) // its own: s may be a slice of a longer string
	tables.strs[c] = c
	tables.strBytes += len(c)
	return c, false
}

// mapHash is a hash of m's entries, whatever their order.
func mapHash(m map[string]string) uint64 {
	var sum uint64
	for k, v := range m {
		sum += maphash.String(seed, k)*31 ^ maphash.String(seed, v)
	}
	return sum
}

// share returns the map the cached objects share that equals m, or, when
// there is none, the map prepare makes of m (with its strings interned),
// which goes into the table at the second sight of an equal map. A map in
// the table must not be changed: every object that holds it would change.
// What prepare recorded in o is dropped when the map goes into the table.
func share(m map[string]string, o *own, prepare func(map[string]string, *own) map[string]string) map[string]string {
	if len(m) > sharedMapMax {
		return prepare(m, o)
	}
	h := mapHash(m)
	tables.Lock()
	c, ok := tables.maps[h]
	tables.Unlock()
	if ok && maps.Equal(c, m) {
		return c
	}
	mark := o.mark()
	m = prepare(m, o)
	tables.Lock()
	defer tables.Unlock()
	if ok || !seenBefore(h) { // a different map with the same hash keeps its place
		return m
	}
	o.undo(mark)
	switch {
	case tables.maps == nil:
		tables.maps = make(map[uint64]map[string]string, 256)
	case len(tables.maps) >= sharedMapsMax:
		clear(tables.maps)
	}
	tables.maps[h] = m
	return m
}

var objectMetaType = reflect.TypeFor[metav1.ObjectMeta]()

// Intern shares the strings of the object obj points to with the other
// cached objects: its metadata's (internMeta) and every other exported
// string field, through pointers, slices, arrays and maps; a string map
// or a slice equal to one another object holds is replaced by that one;
// and a slice with room to spare is copied to one without. The strings
// that are the object's alone are copied into one allocation (own). The
// values do not change. The caches' transforms call it last: a map or a
// slice it shared must not be changed after.
func Intern(obj any) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	o := owns.Get().(*own)
	internValue(v.Elem(), 0, o)
	o.pack()
	owns.Put(o)
}

// internMeta interns m's strings that repeat from object to object
// (namespace, label and annotation keys and values, owner references,
// finalizers, managedFields heads). Not the name nor the UID: only the
// object's next version repeats them, and a table entry would outlive
// the version it saved a copy for.
func internMeta(m *metav1.ObjectMeta, o *own) {
	m.Namespace = intern(m.Namespace, internMax)
	m.GenerateName = intern(m.GenerateName, internMax)
	o.add(&m.Name)
	o.add((*string)(unsafe.Pointer(&m.UID)))
	o.add(&m.ResourceVersion)
	if len(m.Labels) > 0 {
		m.Labels = share(m.Labels, o, internMap)
	}
	if len(m.Annotations) > 0 {
		m.Annotations = share(m.Annotations, o, internMap)
	}
	for i := range m.OwnerReferences {
		r := &m.OwnerReferences[i]
		r.APIVersion, r.Kind, r.Name = intern(r.APIVersion, internMax), intern(r.Kind, internMax), intern(r.Name, internMax)
		r.UID = types.UID(intern(string(r.UID), internMax))
	}
	for i := range m.Finalizers {
		m.Finalizers[i] = intern(m.Finalizers[i], internMax)
	}
	for i := range m.ManagedFields {
		e := &m.ManagedFields[i]
		e.Manager, e.APIVersion, e.FieldsType, e.Subresource = intern(e.Manager, internMax), intern(e.APIVersion, internMax), intern(e.FieldsType, internMax), intern(e.Subresource, internMax)
		e.Operation = metav1.ManagedFieldsOperationType(intern(string(e.Operation), internMax))
	}
}

// internMap returns a copy of m with its keys and values interned, up to
// internMax: an annotation's value may be long and unique.
func internMap(m map[string]string, o *own) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		k = intern(k, internMax)
		v, isOwn := internOwn(v, internMax)
		out[k] = v
		if isOwn {
			o.addValue(out, k, v)
		}
	}
	return out
}

// internValues interns m's values in place and returns m: rebuilding a
// map to share its keys too costs more than it saves.
func internValues(m map[string]string, o *own) map[string]string {
	for k, v := range m {
		v, isOwn := internOwn(v, internLongMax)
		m[k] = v
		if isOwn {
			o.addValue(m, k, v)
		}
	}
	return m
}

func internValue(v reflect.Value, depth int, o *own) {
	if depth > 32 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); s != "" && v.CanSet() {
			c, isOwn := internOwn(s, internLongMax)
			v.SetString(c)
			if isOwn {
				o.add((*string)(v.Addr().UnsafePointer()))
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			internValue(v.Elem(), depth+1, o)
		}
	case reflect.Struct:
		if v.Type() == objectMetaType {
			if v.CanAddr() {
				internMeta(v.Addr().Interface().(*metav1.ObjectMeta), o)
			}
			return
		}
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				internValue(f, depth+1, o)
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		if v.Kind() == reflect.Slice && v.Cap() > v.Len() && v.Len() > 0 && v.CanSet() {
			// The decoder grows a slice by doubling: 10 items take 16
			// places, which the cache would keep for good.
			exact := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			reflect.Copy(exact, v)
			v.Set(exact)
		}
		mark := o.mark()
		for i := range v.Len() {
			internValue(v.Index(i), depth+1, o)
		}
		// A slice with a string of this object's own has no twin: it is
		// neither looked up nor counted as seen.
		if v.Kind() == reflect.Slice && v.CanSet() && o.mark() == mark {
			if shared, found := shareSlice(v); found {
				v.Set(shared)
			}
		}
	case reflect.Map:
		if m, ok := v.Interface().(map[string]string); ok && v.CanSet() && len(m) > 0 {
			v.Set(reflect.ValueOf(share(m, o, internValues)))
		}
	}
}
