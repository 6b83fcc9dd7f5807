package cachefill

import (
	"bytes"
	"hash/maphash"
	"reflect"
	"sync"
	"unsafe"
)

// own gathers, while Intern walks an object, the strings that the object
// alone holds (its name, its UID, a value unique to it), and pack copies
// them into one allocation. The decoder allocated each string on its own,
// rounded up to its size class: 37 bytes took 48.
//
// A string of the object then keeps the whole allocation, up to a few
// KiB, alive for as long as something holds it: the next version of the
// object has one of its own.
type own struct {
	strs []*string  // fields and the items of slices
	vals []mapValue // values of maps that are the object's own
}

type mapValue struct {
	m    map[string]string
	k, v string
}

var owns = sync.Pool{New: func() any { return new(own) }}

// add records the string p points to.
func (o *own) add(p *string) {
	if n := len(*p); n > 0 && n <= internLongMax {
		o.strs = append(o.strs, p)
	}
}

// addValue records m's value of k, v; m must stay out of the tables.
func (o *own) addValue(m map[string]string, k, v string) {
	if n := len(v); n > 0 && n <= internLongMax {
		o.vals = append(o.vals, mapValue{m, k, v})
	}
}

// mark and undo drop what was recorded since mark: the values of a map
// that went into a table.
func (o *own) mark() [2]int { return [2]int{len(o.strs), len(o.vals)} }

func (o *own) undo(m [2]int) {
	clear(o.strs[m[0]:])
	clear(o.vals[m[1]:])
	o.strs, o.vals = o.strs[:m[0]], o.vals[:m[1]]
}

// pack copies the recorded strings into one allocation, and empties o.
func (o *own) pack() {
	n := 0
	for _, p := range o.strs {
		n += len(*p)
	}
	for _, e := range o.vals {
		n += len(e.v)
	}
	if len(o.strs)+len(o.vals) > 1 {
		buf := make([]byte, 0, n)
		str := func(s string) string {
			off := len(buf)
			buf = append(buf, s...) // within its capacity: buf never moves
			return unsafe.String(unsafe.SliceData(buf[off:]), len(s))
		}
		for _, p := range o.strs {
			*p = str(*p)
		}
		for _, e := range o.vals {
			e.m[e.k] = str(e.v)
		}
	}
	o.undo([2]int{})
}

// sharedSliceMax is the largest slice, in bytes, shareSlice shares.
const sharedSliceMax = 4 << 10

// shareSlice returns the slice the cached objects share that is v's twin,
// or v, which goes into the table at the second sight of its twin. Twins
// are equal byte for byte: their strings are the same in memory, that is
// interned, and so are whatever their pointers point to. Called after the
// items were interned. A slice in the table must not be changed.
func shareSlice(v reflect.Value) (shared reflect.Value, found bool) {
	size := uintptr(v.Len()) * v.Type().Elem().Size()
	if size == 0 || size > sharedSliceMax {
		return v, false
	}
	b := unsafe.Slice((*byte)(v.UnsafePointer()), size)
	h := maphash.Bytes(seed, b)
	tables.Lock()
	defer tables.Unlock()
	if c, ok := tables.slices[h]; ok {
		if c.Type() == v.Type() && c.Len() == v.Len() && bytes.Equal(unsafe.Slice((*byte)(c.UnsafePointer()), size), b) {
			return c, true
		}
		return v, false // a different slice with the same hash keeps its place
	}
	if !seenBefore(h) {
		return v, false
	}
	switch {
	case tables.slices == nil:
		tables.slices = make(map[uint64]reflect.Value, 256)
	case len(tables.slices) >= sharedMapsMax:
		clear(tables.slices)
	}
	tables.slices[h] = v
	return v, false
}
