// Package owned finds the objects a controller owns in a cache: by a
// client-go index on full informers, and by a slimmer index of its own on
// metadata-only ones.
package owned

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// UIDIndex indexes owned objects by the UID of their controller owner
// reference.
const UIDIndex = "opgen.dev/controller-uid"

// ControllerUID is the index function of UIDIndex.
func ControllerUID(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil
	}
	if ref := metav1.GetControllerOfNoCopy(m); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return nil, nil
}

// AddIndex adds UIDIndex to inf unless it has it.
func AddIndex(inf cache.SharedIndexInformer) error {
	if _, ok := inf.GetIndexer().GetIndexers()[UIDIndex]; ok {
		return nil
	}
	return inf.AddIndexers(cache.Indexers{UIDIndex: ControllerUID})
}

// ByController returns the objects of inf, indexed by AddIndex, whose
// controller owner is uid.
func ByController(inf cache.SharedIndexInformer, uid types.UID) ([]any, error) {
	return inf.GetIndexer().ByIndex(UIDIndex, string(uid))
}

// Index indexes the objects of the metadata-only caches of one kind by
// the UID of their controller owner. client-go's indexer keeps a set, a
// map, per indexed value: some 300 bytes for an owner of one object, as
// much as the object itself. This keeps a slice of keys.
//
// Its event handler runs after the cache changed, so it may lag behind the
// cache for a moment: a key it names may be gone (the reader skips it),
// and an object just added may be missing (pruning sees it next time).
type Index struct {
	mu sync.RWMutex
	m  map[types.UID][]string
}

// NewIndex returns an empty index.
func NewIndex() *Index { return &Index{m: map[types.UID][]string{}} }

// Handler keeps the index as the cache changes.
func (o *Index) Handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { o.add(obj) },
		UpdateFunc: func(oldObj, newObj any) {
			if ownerOf(oldObj) != ownerOf(newObj) {
				o.remove(oldObj)
				o.add(newObj)
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			o.remove(obj)
		},
	}
}

func ownerOf(obj any) types.UID {
	uids, _ := ControllerUID(obj)
	if len(uids) == 0 {
		return ""
	}
	return types.UID(uids[0])
}

func (o *Index) add(obj any) {
	uid := ownerOf(obj)
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if uid == "" || err != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !slices.Contains(o.m[uid], key) {
		o.m[uid] = append(o.m[uid], key)
	}
}

func (o *Index) remove(obj any) {
	uid := ownerOf(obj)
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if uid == "" || err != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	keys := slices.DeleteFunc(o.m[uid], func(k string) bool { return k == key })
	if len(keys) == 0 {
		delete(o.m, uid)
		return
	}
	o.m[uid] = keys
}

// Drop removes objects a cache let go of without delete events (a
// sharded member's dropped bucket).
func (o *Index) Drop(objs []any) {
	for _, obj := range objs {
		o.remove(obj)
	}
}

// Of returns the objects of inf whose controller owner is uid.
func (o *Index) Of(uid types.UID, inf cache.SharedIndexInformer) []any {
	o.mu.RLock()
	keys := slices.Clone(o.m[uid])
	o.mu.RUnlock()
	var out []any
	for _, k := range keys {
		if obj, ok, _ := inf.GetIndexer().GetByKey(k); ok {
			if m, err := meta.Accessor(obj); err == nil && ownerOf(m) == uid {
				out = append(out, obj)
			}
		}
	}
	return out
}
