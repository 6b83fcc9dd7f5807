package runtime

import (
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/owned"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/ownwrites"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Reader reads the objects of one built-in kind from the operator's shared
// caches: no API request per read, and the objects are shared, so treat
// them as read-only (DeepCopy before changing one). Cached objects share
// more than that: objects with equal labels or annotations hold one map,
// and equal slices (a command line, a list of ports) are one slice.
//
// The generated <Kind>Readers of a controller return Readers for the kinds
// its +opgen:controller:reads and owns markers name, whose RBAC (get, list,
// watch) the generated role grants; a handler asks for them in its
// New<Kind>Controller constructor:
//
//	func NewGreetingController(op *runtime.Operator) *GreetingController {
//		return &GreetingController{deployments: NewGreetingReaders(op).Deployments()}
//	}
//
// and reads with c.deployments.Get(g.Namespace, g.Name).
type Reader[T k8sruntime.Object] struct {
	resource  schema.GroupResource
	informers map[string]cache.SharedIndexInformer // by namespace; AllNamespaces for all
	// writes are the operator's applies of owned objects of the kind:
	// reads see them until the cache does.
	writes *ownwrites.Writes[*unstructured.Unstructured]
}

// Read returns a Reader of kind gvk (resource its plural), whose informer
// pick selects from a client-go factory, such as
// f.Apps().V1().Deployments().Informer(). It requests the informer in
// every namespace the operator watches (once for all of them when it
// watches all namespaces or the kind is cluster-scoped); Run starts them
// and waits until they synced before any controller runs, and reports
// their watch failures as telemetry.WatchFailed. Call it before Run, in a
// handler's constructor: a Reader made later never syncs, and its reads
// say so.
func Read[T k8sruntime.Object](op *Operator, gvk schema.GroupVersionKind, resource string, namespaced bool,
	pick func(informers.SharedInformerFactory) cache.SharedIndexInformer) *Reader[T] {
	gr := schema.GroupResource{Group: gvk.Group, Resource: resource}
	r := &Reader[T]{resource: gr, informers: map[string]cache.SharedIndexInformer{}, writes: op.owned.Of(gr)}
	for _, ns := range op.opts.namespaces(namespaced) {
		inf := pick(op.Informers(ns))
		_ = owned.AddIndex(inf) // before Run the informer has not started: this cannot fail
		// An informer that already runs keeps the handler it has: it
		// was requested before Run, and reports its failures already.
		_ = observeWatch(inf, op, telemetry.Watch{Controller: "reader", GVK: gvk, Namespace: ns})
		r.informers[ns] = inf
		op.seen.Add(gr, ns, inf)
	}
	return r
}

// Get returns the object namespace/name ("" namespace for a
// cluster-scoped kind), or a NotFound error (apierrors.IsNotFound) when
// the cache holds none. After the operator applied the object (an owned
// one), it returns at least what the apply returned; after it deleted
// it, NotFound.
func (r *Reader[T]) Get(namespace, name string) (T, error) {
	var zero T
	inf, err := r.informer(namespace)
	if err != nil {
		return zero, err
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	obj, ok, err := inf.GetIndexer().GetByKey(key)
	if err != nil {
		return zero, fmt.Errorf("read %s %s from the cache: %w", r.resource, key, err)
	}
	rv := ""
	if m, isMeta := obj.(metav1.Object); ok && isMeta {
		rv = m.GetResourceVersion()
	}
	if u, written := r.writes.NewerThan(cache.ObjectName{Namespace: namespace, Name: name}, rv, ok); written {
		obj, ok = u, true
	}
	if !ok || r.hidden(obj) {
		return zero, apierrors.NewNotFound(r.resource, name)
	}
	if u, written := obj.(*unstructured.Unstructured); written {
		return r.fromWrite(u)
	}
	return r.typed(obj)
}

// hidden reports whether the operator deleted obj a moment ago: reads
// hide it until the cache shows the deletion.
func (r *Reader[T]) hidden(obj any) bool {
	m, ok := obj.(metav1.Object)
	return ok && r.writes.Deleted.Hidden(m.GetUID())
}

// fromWrite converts what an apply returned to T.
func (r *Reader[T]) fromWrite(u *unstructured.Unstructured) (T, error) {
	t := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(u.Object, t); err != nil {
		var zero T
		return zero, fmt.Errorf("read %s %s: %w", r.resource, u.GetName(), err)
	}
	return t, nil
}

// List returns the objects of namespace (every namespace the Reader
// caches when namespace is "") whose labels match selector
// (labels.Everything() for all), in no particular order. Like Get, it
// shows the operator's own writes before the cache does.
func (r *Reader[T]) List(namespace string, selector labels.Selector) ([]T, error) {
	var out []T
	var typeErr error
	listed := map[cache.ObjectName]bool{}
	add := func(obj any) {
		if r.hidden(obj) {
			return
		}
		t, err := r.current(obj, listed)
		if err != nil {
			typeErr = err
			return
		}
		out = append(out, t)
	}
	if err := r.listCached(namespace, selector, add); err != nil {
		return nil, err
	}
	for _, u := range r.writes.All() { // applied a moment ago, not cached yet
		key := cache.ObjectName{Namespace: u.GetNamespace(), Name: u.GetName()}
		if listed[key] || r.hidden(u) || (namespace != "" && namespace != u.GetNamespace()) || !selector.Matches(labels.Set(u.GetLabels())) {
			continue
		}
		t, err := r.fromWrite(u)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, typeErr
}

func (r *Reader[T]) listCached(namespace string, selector labels.Selector, add func(any)) error {
	if namespace == "" {
		for _, inf := range r.informers {
			if err := cache.ListAll(inf.GetIndexer(), selector, add); err != nil {
				return err
			}
		}
		return nil
	}
	inf, err := r.informer(namespace)
	if err != nil {
		return err
	}
	return cache.ListAllByNamespace(inf.GetIndexer(), namespace, selector, add)
}

// Owned returns the objects whose controller owner is owner (its UID in
// their controller owner reference), from the cache's owner index: the
// owned objects of one object, without listing its namespace. Like Get, it
// shows the operator's own writes before the cache does: an owned object created
// or applied a moment ago is there, one deleted is not.
func (r *Reader[T]) Owned(owner metav1.Object) ([]T, error) {
	var out []T
	listed := map[cache.ObjectName]bool{}
	for ns, inf := range r.informers {
		if ns != AllNamespaces && owner.GetNamespace() != "" && ns != owner.GetNamespace() {
			continue
		}
		if !inf.HasSynced() {
			return nil, fmt.Errorf("read %s: the cache has not synced: make readers before Operator.Run (in the handler's constructor), so that Run starts them", r.resource)
		}
		objs, err := owned.ByController(inf, owner.GetUID())
		if err != nil {
			return nil, fmt.Errorf("read the %s owned by %s: %w", r.resource, owner.GetName(), err)
		}
		for _, obj := range objs {
			if r.hidden(obj) {
				continue
			}
			t, err := r.current(obj, listed)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
	}
	for _, u := range r.writes.All() { // applied a moment ago, not cached yet
		key := cache.ObjectName{Namespace: u.GetNamespace(), Name: u.GetName()}
		if ref := metav1.GetControllerOfNoCopy(u); listed[key] || r.hidden(u) || ref == nil || ref.UID != owner.GetUID() {
			continue
		}
		t, err := r.fromWrite(u)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// current returns the cached obj as T, or what the operator's last write
// of it returned when that is newer, and marks it listed.
func (r *Reader[T]) current(obj any, listed map[cache.ObjectName]bool) (T, error) {
	if m, ok := obj.(metav1.Object); ok {
		key := cache.ObjectName{Namespace: m.GetNamespace(), Name: m.GetName()}
		listed[key] = true
		if u, written := r.writes.NewerThan(key, m.GetResourceVersion(), true); written {
			return r.fromWrite(u)
		}
	}
	return r.typed(obj)
}

// informer returns the synced informer that caches namespace.
func (r *Reader[T]) informer(namespace string) (cache.SharedIndexInformer, error) {
	inf, ok := r.informers[AllNamespaces]
	if !ok {
		inf, ok = r.informers[namespace]
	}
	switch {
	case !ok:
		return nil, fmt.Errorf("read %s in namespace %q: the operator does not watch that namespace, so it caches nothing there (Options.Namespaces)", r.resource, namespace)
	case !inf.HasSynced():
		return nil, fmt.Errorf("read %s: the cache has not synced: make readers before Operator.Run (in the handler's constructor), so that Run starts them", r.resource)
	}
	return inf, nil
}

func (r *Reader[T]) typed(obj any) (T, error) {
	t, ok := obj.(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("read %s: the cache holds a %T, not a %T: the Reader's informer is of another kind", r.resource, obj, zero)
	}
	return t, nil
}
