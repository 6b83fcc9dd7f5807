// Package ownwrites holds what an operator's own writes returned, so that
// its reads see them before its caches do, and their watch events wake
// nobody.
package ownwrites

import (
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// Writes holds what the operator's own writes returned, by key. A read
// right after a write (a requeue at once) sees at least what was written
// until the cache shows it, and the watch event of the write itself wakes
// nobody.
//
// The objects and the versions live apart. The informer updates its
// cache before it calls the event handlers, so a read may find the cache
// caught up while the write's event is still on its way. And the event
// may come before the write's answer: events of a key with a write in
// flight wait for the answer (begin, end).
type Writes[T metav1.Object] struct {
	// Deleted are the objects of the key space the operator deleted.
	Deleted Deletes

	n  atomic.Int64 // entries of the maps: reads skip the lock at 0
	mu sync.Mutex
	// objs are the objects written, until a read finds the cache as new.
	objs map[cache.ObjectName]T
	// rvs are the resource versions of writes whose events have not come,
	// oldest first: writes in quick succession outrun their events.
	rvs map[cache.ObjectName][]string
	// flying counts the writes of a key in flight; parked are the
	// versions of its events seen meanwhile.
	flying map[cache.ObjectName]int
	parked map[cache.ObjectName][]string
	// gone are keys whose object the watch deleted while a write was in
	// flight: the write's answer is not kept, as no event of that object
	// would come to drop it.
	gone map[cache.ObjectName]bool
}

// Begin records a write of key in flight. end must follow.
func (w *Writes[T]) Begin(key cache.ObjectName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.flying == nil {
		w.objs, w.rvs = map[cache.ObjectName]T{}, map[cache.ObjectName][]string{}
		w.flying, w.parked = map[cache.ObjectName]int{}, map[cache.ObjectName][]string{}
	}
	w.flying[key]++
	w.n.Add(1)
}

// End records the answer of a write begin announced: obj when it
// succeeded. before is the resource version the cache showed before the
// write ("" for unknown): a write that kept it changed nothing, and no
// event follows it. wake reports that an event seen meanwhile was not
// this write's, and must wake its key now.
func (w *Writes[T]) End(key cache.ObjectName, obj T, ok bool, before string) (wake bool) {
	return len(w.EndWoken(key, obj, ok, before)) > 0
}

// EndWoken is End, and returns the resource versions of the events seen
// meanwhile that were not this write's (nil when none must wake the key).
func (w *Writes[T]) EndWoken(key cache.ObjectName, obj T, ok bool, before string) (woken []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n.Add(-1)
	gone := w.gone[key]
	if w.flying[key]--; w.flying[key] == 0 {
		delete(w.flying, key)
		delete(w.gone, key)
	}
	rv := ""
	if ok {
		rv = obj.GetResourceVersion()
		if !gone {
			w.Put(key, obj)
		}
	}
	parked := w.parked[key]
	if _, flying := w.flying[key]; !flying {
		delete(w.parked, key)
	}
	own := false
	for _, p := range parked {
		switch {
		case p == rv:
			own = true
		case w.earlier(key, p):
			// The event of an earlier write of the operator's, late.
		default:
			woken = append(woken, p)
		}
	}
	if ok && !gone && rv != before && !own {
		if _, had := w.rvs[key]; !had {
			w.n.Add(1)
		}
		w.rvs[key] = append(w.rvs[key], rv)
	}
	return woken
}

// earlier takes rv from the versions of key's earlier writes whose events
// have not come, and reports whether it was there.
func (w *Writes[T]) earlier(key cache.ObjectName, rv string) bool {
	i := slices.Index(w.rvs[key], rv)
	if i < 0 {
		return false
	}
	if w.rvs[key] = slices.Delete(w.rvs[key], i, i+1); len(w.rvs[key]) == 0 {
		delete(w.rvs, key)
		w.n.Add(-1)
	}
	return true
}

func (w *Writes[T]) Put(key cache.ObjectName, obj T) {
	if _, ok := w.objs[key]; !ok {
		w.n.Add(1)
	}
	w.objs[key] = obj
}

// Read returns the object written for key when it is newer than cached
// (found false: the cache has none), else cached.
func (w *Writes[T]) Read(key cache.ObjectName, cached T, found bool) (T, bool) {
	rv := ""
	if found {
		rv = cached.GetResourceVersion()
	}
	if obj, ok := w.NewerThan(key, rv, found); ok {
		return obj, true
	}
	return cached, found
}

// NewerThan returns the object written for key when the cache holds none
// (found false) or an older one, at rv. Once the cache caught up it drops
// it.
func (w *Writes[T]) NewerThan(key cache.ObjectName, rv string, found bool) (T, bool) {
	var zero T
	if w.n.Load() == 0 {
		return zero, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	obj, ok := w.objs[key]
	switch {
	case !ok:
		return zero, false
	case found && !newer(obj.GetResourceVersion(), rv):
		w.DropObj(key) // the cache caught up
		return zero, false
	}
	return obj, true
}

// All returns the objects written, for reads that list.
func (w *Writes[T]) All() []T {
	if w.n.Load() == 0 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]T, 0, len(w.objs))
	for _, obj := range w.objs {
		out = append(out, obj)
	}
	return out
}

// Seen takes a watch event of key at resource version rv, and reports
// whether it must not wake the key: it is the event of the operator's own
// write, or it waits for the answer of a write in flight (end).
func (w *Writes[T]) Seen(key cache.ObjectName, rv string) (own bool) {
	if w.n.Load() == 0 {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if obj, ok := w.objs[key]; ok && !newer(obj.GetResourceVersion(), rv) {
		w.DropObj(key)
	}
	if w.flying[key] > 0 {
		w.parked[key] = append(w.parked[key], rv)
		return true
	}
	written := w.rvs[key]
	kept := written[:0]
	for _, v := range written {
		switch {
		case v == rv:
			own = true
		case newer(v, rv):
			kept = append(kept, v)
		}
	}
	if len(kept) == 0 && len(written) > 0 {
		delete(w.rvs, key)
		w.n.Add(-1)
	} else if len(kept) > 0 {
		w.rvs[key] = kept
	}
	return own
}

// Forget drops key: its object is gone. The answers of writes in flight
// are dropped too.
func (w *Writes[T]) Forget(key cache.ObjectName) {
	if w.n.Load() == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.DropObj(key)
	if w.flying[key] > 0 {
		if w.gone == nil {
			w.gone = map[cache.ObjectName]bool{}
		}
		w.gone[key] = true
	}
	if _, ok := w.rvs[key]; ok {
		delete(w.rvs, key)
		w.n.Add(-1)
	}
}

func (w *Writes[T]) DropObj(key cache.ObjectName) {
	if _, ok := w.objs[key]; ok {
		delete(w.objs, key)
		w.n.Add(-1)
	}
}

// newer reports whether resource version a is later than b. Resource
// versions are etcd revisions, which the API server does not promise to
// compare; an unparsable one is taken as not newer, so the cache wins.
func newer(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x > y
}

// ByResource are the writes to the owned objects of each resource, which
// the readers of owned kinds show until the cache has them.
type ByResource struct {
	mu sync.Mutex
	by map[schema.GroupResource]*Writes[*unstructured.Unstructured]
}

// Of returns the writes to the owned objects of gr.
func (w *ByResource) Of(gr schema.GroupResource) *Writes[*unstructured.Unstructured] {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.by == nil {
		w.by = map[schema.GroupResource]*Writes[*unstructured.Unstructured]{}
	}
	ws, ok := w.by[gr]
	if !ok {
		ws = &Writes[*unstructured.Unstructured]{}
		w.by[gr] = ws
	}
	return ws
}
