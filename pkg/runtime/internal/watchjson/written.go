package watchjson

import (
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// The watch event of an operator's own write carries the object the write
// already returned: the same object at the same resourceVersion. written
// keeps a copy of what each write returned for a moment, so that the
// watch decoder hands that copy over instead of decoding the event again:
// a status write then costs one decode, not two.
//
// An entry is found by client (one per cluster and group-version),
// resource, namespace, name and resourceVersion, which together name one
// state of one object. The decoder reads those from the event's bytes
// (peekEvent) and decodes the event whenever it finds no entry, or
// cannot read them for sure.
var written = writtenObjects{m: map[writtenKey]map[string]writtenObject{}}

// writtenFor is how long an entry waits for its event: events follow
// their writes by milliseconds. An entry whose event came before the
// write's answer would otherwise wait for good.
const writtenFor = 2 * time.Second

// writtenMax bounds the entries, each an object: writes in flight, not
// objects, need them.
const writtenMax = 1024

type writtenKey struct {
	c        rest.Interface
	resource string
}

type writtenObject struct {
	rv  string
	obj runtime.Object
	at  time.Time
}

type writtenObjects struct {
	n  atomic.Int64 // entries: the decoder skips the lock at 0
	mu sync.Mutex
	m  map[writtenKey]map[string]writtenObject // by namespace + "/" + name
	// order are the entries by age, for expiry.
	order []writtenAt
}

type writtenAt struct {
	k   writtenKey
	key string
	at  time.Time
}

// keyable reports whether c can key the table: the generated clients'
// *rest.RESTClient can.
func keyable(c rest.Interface) bool {
	return c != nil && reflect.TypeOf(c).Comparable()
}

// remember keeps a copy of obj, which a write of resource through c
// returned.
func (w *writtenObjects) remember(c rest.Interface, resource string, obj runtime.Object) {
	if !keyable(c) {
		return
	}
	m, err := meta.Accessor(obj)
	if err != nil || m.GetResourceVersion() == "" {
		return
	}
	k, key, now := writtenKey{c, resource}, m.GetNamespace()+"/"+m.GetName(), time.Now()
	cp := obj.DeepCopyObject()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expire(now)
	byKey := w.m[k]
	if byKey == nil {
		byKey = map[string]writtenObject{}
		w.m[k] = byKey
	}
	if _, had := byKey[key]; !had {
		if w.n.Load() >= writtenMax {
			return
		}
		w.n.Add(1)
	}
	byKey[key] = writtenObject{rv: m.GetResourceVersion(), obj: cp, at: now}
	w.order = append(w.order, writtenAt{k, key, now})
}

// expire drops the entries older than writtenFor.
func (w *writtenObjects) expire(now time.Time) {
	i := 0
	for ; i < len(w.order) && now.Sub(w.order[i].at) > writtenFor; i++ {
		o := w.order[i]
		if e, ok := w.m[o.k][o.key]; ok && e.at.Equal(o.at) {
			w.drop(o.k, o.key)
		}
	}
	if i > 0 {
		w.order = append(w.order[:0], w.order[i:]...)
	}
}

func (w *writtenObjects) drop(k writtenKey, key string) {
	delete(w.m[k], key)
	if len(w.m[k]) == 0 {
		delete(w.m, k)
	}
	w.n.Add(-1)
}

// take returns the object of the event in frame when a write returned it:
// the entry of the event's object at the event's resourceVersion, which
// it removes. An event of the same object at another version drops an
// older entry. key is scratch space, returned for reuse.
func (w *writtenObjects) take(c rest.Interface, resource string, frame, key []byte) (watch.EventType, runtime.Object, []byte, bool) {
	if w.n.Load() == 0 || !keyable(c) {
		return "", nil, key, false
	}
	ev, ok := peekEvent(frame)
	if !ok {
		return "", nil, key, false
	}
	key = append(append(append(key[:0], ev.namespace...), '/'), ev.name...)
	k := writtenKey{c, resource}
	w.mu.Lock()
	defer w.mu.Unlock()
	e, found := w.m[k][string(key)]
	switch {
	case !found:
		return "", nil, key, false
	case e.rv == string(ev.rv) && (ev.typ == watch.Added || ev.typ == watch.Modified):
		w.drop(k, string(key))
		return ev.typ, e.obj, key, true
	case ev.typ == watch.Deleted || newer(ev.rv, e.rv):
		w.drop(k, string(key))
	}
	return "", nil, key, false
}

// newer reports whether resource version a is later than b. Versions are
// opaque, but the API server's are etcd revisions; anything else is not
// known to be newer.
func newer(a []byte, b string) bool {
	x, err := strconv.ParseUint(string(a), 10, 64)
	if err != nil {
		return false
	}
	y, err := strconv.ParseUint(b, 10, 64)
	return err == nil && x > y
}
