// Package seen tells whether an operator's caches have seen a write
// someone else made: a test that changed an object waits for it before it
// steps a fake clock, so that the action the step fires reads the change.
package seen

import (
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// Caches are the informers of an operator, by resource and namespace.
type Caches struct {
	mu sync.Mutex
	by map[schema.GroupResource][]scoped
}

// scoped is an informer of the objects of one namespace, or of all ("").
type scoped struct {
	namespace string
	inf       cache.SharedIndexInformer
}

// Add records inf, an informer of gr's objects in namespace ("" for all
// namespaces, or for a cluster-scoped kind).
func (c *Caches) Add(gr schema.GroupResource, namespace string, inf cache.SharedIndexInformer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil {
		c.by = map[schema.GroupResource][]scoped{}
	}
	for _, s := range c.by[gr] {
		if s.inf == inf {
			return
		}
	}
	c.by[gr] = append(c.by[gr], scoped{namespace, inf})
}

// Seen reports whether every informer of gr that caches namespace has
// seen the write of the object namespace/name that answered with
// resource version rv: it holds the object at rv or later, or it holds
// none and has seen rv go by (the object was deleted after). A delete
// answered without the object has no rv: it is seen when no informer
// holds an object of that name with uid. A write the operator caches
// nowhere is seen.
func (c *Caches) Seen(gr schema.GroupResource, namespace, name, rv string, uid types.UID) bool {
	c.mu.Lock()
	infs := append([]scoped(nil), c.by[gr]...)
	c.mu.Unlock()
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	for _, s := range infs {
		if s.namespace != "" && s.namespace != namespace {
			continue
		}
		if !informerSaw(s.inf, key, rv, uid) {
			return false
		}
	}
	return true
}

func informerSaw(inf cache.SharedIndexInformer, key, rv string, uid types.UID) bool {
	obj, found, err := inf.GetIndexer().GetByKey(key)
	var m metav1.Object
	if err == nil && found {
		m, err = meta.Accessor(obj)
		found = err == nil
	}
	want, err := strconv.ParseUint(rv, 10, 64)
	switch {
	case rv == "":
		return !found || m.GetUID() != uid
	case err != nil:
		return true // not an etcd revision: nothing to compare
	case found:
		return atLeast(m.GetResourceVersion(), want)
	}
	return atLeast(inf.LastSyncResourceVersion(), want)
}

func atLeast(rv string, want uint64) bool {
	v, err := strconv.ParseUint(rv, 10, 64)
	return err == nil && v >= want
}
