package preview

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// Live caches objects as the API server serves them, for the resources an
// operator writes most: a write to one of them is diffed against its
// cached object, not against a GET of its own. Every GET costs the API
// server as much as the dry run it precedes.
//
// The cache is the server's JSON, not the operator's typed objects: those
// lose what their Go types do not declare (a field a new version dropped,
// an absent field that is not omitempty), and the diff would show it.
// A cached object is used only when the dry run's answer carries its
// resource version: a dry run answers with the version of the object it
// ran over, so the two are the same object. Otherwise, and for objects
// the cache does not hold, the write's object is read with a GET, as
// before.
type Live struct {
	client    dynamic.Interface
	informers map[liveKey]cache.SharedIndexInformer // set before Start
	// waitUntil ends the wait of a write for its resource's first list:
	// past it, the write reads its object with a GET.
	waitUntil time.Time
}

type liveKey struct {
	resource  schema.GroupVersionResource
	namespace string // "" for all, and for a cluster-scoped resource
}

// NewLive returns an empty cache that lists and watches through client.
func NewLive(client dynamic.Interface) *Live {
	return &Live{client: client, informers: map[liveKey]cache.SharedIndexInformer{}}
}

// Watch caches the objects of resource in namespace ("" for all) that
// match the label selector ("" for all). Call it before Start.
func (l *Live) Watch(resource schema.GroupVersionResource, namespace, selector string) {
	key := liveKey{resource, namespace}
	if _, ok := l.informers[key]; ok {
		return
	}
	tweak := func(o *metav1.ListOptions) { o.LabelSelector = selector }
	inf := dynamicinformer.NewFilteredDynamicInformer(l.client, resource, namespace, 0, cache.Indexers{}, tweak).Informer()
	_ = inf.SetTransform(dropManagedFields) // before Start, it cannot fail
	l.informers[key] = inf
}

// Start runs the informers until ctx ends. Nothing waits for their first
// lists but the first write to an object of theirs: a preview that
// writes nothing does not pay for them. A write waits until wait has
// passed since Start at most.
func (l *Live) Start(ctx context.Context, wait time.Duration) {
	l.waitUntil = time.Now().Add(wait)
	for _, inf := range l.informers {
		go inf.RunWithContext(ctx)
	}
}

// before returns the object a write of method to t changed, as the
// server answered its dry run with after, when the cache can tell: a
// delete, and a write that ends the object, read only the object's
// existence and kind; any other write its fields, which must be those of
// the version the dry run ran over.
func (l *Live) before(ctx context.Context, t Target, method string, after map[string]any) (map[string]any, bool) {
	obj, ok := l.get(ctx, t)
	if !ok {
		return nil, false
	}
	if method == http.MethodDelete || isStatus(after) {
		return obj, true
	}
	rv, _ := nested(after, "metadata", "resourceVersion").(string)
	return obj, rv != "" && rv == nested(obj, "metadata", "resourceVersion")
}

// watches reports whether the cache holds t's resource: t's object, or
// its status, which the object holds.
func (l *Live) watches(t Target) bool {
	return t.Name != "" && (t.Subresource == "" || t.Subresource == "status") && l.informer(t) != nil
}

// get returns the cached object t names as encoding/json decodes it,
// which the diff compares with the dry run's answer: integers as float64.
func (l *Live) get(ctx context.Context, t Target) (map[string]any, bool) {
	inf := l.informer(t)
	if inf == nil || !l.synced(ctx, inf) {
		return nil, false
	}
	key := t.Name
	if t.Namespace != "" {
		key = t.Namespace + "/" + t.Name
	}
	item, ok, err := inf.GetStore().GetByKey(key)
	if err != nil || !ok {
		return nil, false
	}
	u, ok := item.(*unstructured.Unstructured)
	if !ok {
		return nil, false
	}
	data, err := json.Marshal(u.Object)
	if err != nil {
		return nil, false
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, false
	}
	return obj, true
}

// informer returns the informer that holds t's object, or nil.
func (l *Live) informer(t Target) cache.SharedIndexInformer {
	if l == nil {
		return nil
	}
	gvr := schema.GroupVersionResource{Group: t.Group, Version: t.Version, Resource: t.Resource}
	if inf := l.informers[liveKey{gvr, ""}]; inf != nil {
		return inf
	}
	if t.Namespace == "" {
		return nil
	}
	return l.informers[liveKey{gvr, t.Namespace}]
}

// synced reports whether inf's first list ended, waiting for it until
// waitUntil.
func (l *Live) synced(ctx context.Context, inf cache.SharedIndexInformer) bool {
	if inf.HasSynced() {
		return true
	}
	t := time.NewTimer(time.Until(l.waitUntil))
	defer t.Stop()
	select {
	case <-inf.HasSyncedChecker().Done():
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// dropManagedFields drops what the diff ignores and would be most of the
// cache.
func dropManagedFields(obj any) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	}
	return obj, nil
}
