package cachefill

import (
	"hash/maphash"
	"maps"
	"reflect"
	"strings"
	"sync"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// intern returns the copy of s that the cached objects share, and whether
// there is one: at the second sight of s, a copy of s goes into the
// table. A hit costs a map lookup and no allocation. Strings longer than
// limit are returned as they are.
func intern(s string, limit int) (string, bool) {
	if s == "" || len(s) > limit {
		return s, false
	}
	tables.Lock()
	defer tables.Unlock()
	if c, ok := tables.strs[s]; ok {
		return c, true
	}
	if !seenBefore(maphash.String(seed, s)) {
		return s, false
	}
	switch {
	case tables.strs == nil:
		tables.strs = make(map[string]string, 1024)
	case len(tables.strs) >= internTableMax || tables.strBytes+len(s) > internTableBytes:
		clear(tables.strs)
		tables.strBytes = 0
	}
	c := strings.Clone(s) // its own: s may be packed with its object's other strings
	tables.strs[c] = c
	tables.strBytes += len(c)
	return c, true
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
// which goes into the table at the second sight of an equal map. kept
// reports whether the map returned is in the table: it must not be
// changed, every object that holds it would change.
func share(m map[string]string, prepare func(map[string]string) map[string]string) (_ map[string]string, kept bool) {
	if len(m) > sharedMapMax {
		return prepare(m), false
	}
	h := mapHash(m)
	tables.Lock()
	c, ok := tables.maps[h]
	tables.Unlock()
	if ok && maps.Equal(c, m) {
		return c, true
	}
	m = prepare(m)
	tables.Lock()
	defer tables.Unlock()
	if ok || !seenBefore(h) { // a different map with the same hash keeps its place
		return m, false
	}
	switch {
	case tables.maps == nil:
		tables.maps = make(map[uint64]map[string]string, 256)
	case len(tables.maps) >= sharedMapsMax:
		clear(tables.maps)
	}
	tables.maps[h] = m
	return m, true
}

var objectMetaType = reflect.TypeFor[metav1.ObjectMeta]()

// Intern shares the strings of the object obj points to with the other
// cached objects: its metadata's (internMeta) and every other exported
// string field, through pointers, slices, arrays and maps; a string map
// equal to one another object holds is replaced by that one; a slice with
// room to spare is copied to one without; and the strings no other object
// holds are copied into one allocation. The values do not change. The
// caches' transforms call it last: a map it shared must not be changed
// after.
func Intern(obj any) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	p := packers.Get().(*packer)
	p.walk(v.Elem(), 0)
	p.pack()
	packers.Put(p)
}

// packer walks an object, interning what repeats, and collects the
// strings it could not share, to copy them into one allocation: each
// string apart costs its own rounding to a size class and an object more
// for the collector to mark.
type packer struct {
	n       int
	fields  []reflect.Value // settable strings
	ptrs    []*string
	entries []mapEntry // values of maps no other object holds
}

type mapEntry struct {
	m map[string]string
	k string
}

var packers = sync.Pool{New: func() any { return new(packer) }}

// packMax is the longest string packed: a longer one gains little from
// sharing its allocation.
const packMax = internLongMax

// field interns the string v holds, or collects it.
func (p *packer) field(v reflect.Value, limit int) {
	s := v.String()
	if s == "" || !v.CanSet() {
		return
	}
	if c, ok := intern(s, limit); ok {
		v.SetString(c)
	} else if len(s) <= packMax {
		p.n += len(s)
		p.fields = append(p.fields, v)
	}
}

// ptr is field for a string of the metadata.
func (p *packer) ptr(s *string, limit int) {
	if *s == "" {
		return
	}
	if c, ok := intern(*s, limit); ok {
		*s = c
	} else if len(*s) <= packMax {
		p.n += len(*s)
		p.ptrs = append(p.ptrs, s)
	}
}

// stringMap returns m, or the equal map another object holds, with its
// strings interned; copy says whether to intern into a copy (the keys too)
// or in place (the values: rebuilding a map to share its keys costs more
// than it saves).
func (p *packer) stringMap(m map[string]string, limit int, copy bool) map[string]string {
	mark := len(p.entries)
	out, kept := share(m, func(m map[string]string) map[string]string {
		out := m
		if copy {
			out = make(map[string]string, len(m))
		}
		for k, v := range m {
			if copy {
				k, _ = intern(k, internMax)
			}
			c, ok := intern(v, limit)
			out[k] = c
			if !ok && c != "" && len(c) <= packMax {
				p.n += len(c)
				p.entries = append(p.entries, mapEntry{out, k})
			}
		}
		return out
	})
	if kept { // shared: its strings stay where they are
		for _, e := range p.entries[mark:] {
			p.n -= len(e.m[e.k])
		}
		p.entries = p.entries[:mark]
	}
	return out
}

// pack copies the strings collected into one allocation.
func (p *packer) pack() {
	if len(p.fields)+len(p.ptrs)+len(p.entries) > 1 {
		buf := make([]byte, 0, p.n)
		put := func(s string) string {
			start := len(buf)
			buf = append(buf, s...)
			return unsafe.String(&buf[start], len(s)) // buf never grows: the strings stay valid
		}
		for _, v := range p.fields {
			v.SetString(put(v.String()))
		}
		for _, s := range p.ptrs {
			*s = put(*s)
		}
		for _, e := range p.entries {
			e.m[e.k] = put(e.m[e.k])
		}
	}
	clear(p.fields)
	clear(p.ptrs)
	clear(p.entries)
	p.n, p.fields, p.ptrs, p.entries = 0, p.fields[:0], p.ptrs[:0], p.entries[:0]
}

// meta interns m's strings that repeat from object to object (namespace,
// label and annotation keys and values, owner reference kinds,
// managedFields heads) and collects the others (name, UID, version).
func (p *packer) meta(m *metav1.ObjectMeta) {
	p.ptr(&m.Namespace, internMax)
	p.ptr(&m.Name, internMax)
	p.ptr(&m.GenerateName, internMax)
	p.ptr((*string)(&m.UID), internMax)
	p.ptr(&m.ResourceVersion, internMax)
	if len(m.Labels) > 0 {
		m.Labels = p.stringMap(m.Labels, internMax, true)
	}
	if len(m.Annotations) > 0 {
		m.Annotations = p.stringMap(m.Annotations, internMax, true)
	}
	for i := range m.OwnerReferences {
		r := &m.OwnerReferences[i]
		p.ptr(&r.APIVersion, internMax)
		p.ptr(&r.Kind, internMax)
		p.ptr(&r.Name, internMax)
		p.ptr((*string)(&r.UID), internMax)
	}
	for i := range m.Finalizers {
		p.ptr(&m.Finalizers[i], internMax)
	}
	for i := range m.ManagedFields {
		e := &m.ManagedFields[i]
		p.ptr(&e.Manager, internMax)
		p.ptr(&e.APIVersion, internMax)
		p.ptr(&e.FieldsType, internMax)
		p.ptr(&e.Subresource, internMax)
		p.ptr((*string)(&e.Operation), internMax)
	}
}

func (p *packer) walk(v reflect.Value, depth int) {
	if depth > 32 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		p.field(v, internLongMax)
	case reflect.Pointer:
		if !v.IsNil() {
			p.walk(v.Elem(), depth+1)
		}
	case reflect.Struct:
		if v.Type() == objectMetaType {
			if v.CanAddr() {
				p.meta(v.Addr().Interface().(*metav1.ObjectMeta))
			}
			return
		}
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				p.walk(f, depth+1)
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
		for i := range v.Len() {
			p.walk(v.Index(i), depth+1)
		}
	case reflect.Map:
		if m, ok := v.Interface().(map[string]string); ok && v.CanSet() && len(m) > 0 {
			if c := p.stringMap(m, internLongMax, false); !sameMap(c, m) {
				v.Set(reflect.ValueOf(c))
			}
		}
	}
}

// sameMap reports whether a and b are the same map (not only equal).
func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
