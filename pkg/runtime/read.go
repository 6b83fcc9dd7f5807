package runtime

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Reader reads the objects of one built-in kind from the operator's shared
// caches: no API request per read, and the objects are shared, so treat
// them as read-only (DeepCopy before changing one).
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
	r := &Reader[T]{
		resource:  schema.GroupResource{Group: gvk.Group, Resource: resource},
		informers: map[string]cache.SharedIndexInformer{},
	}
	for _, ns := range op.namespaces(namespaced) {
		inf := pick(op.Informers(ns))
		// An informer that already runs keeps the handler it has: it
		// was requested before Run, and reports its failures already.
		_ = observeWatch(inf, op, telemetry.Watch{Controller: "reader", GVK: gvk, Namespace: ns})
		r.informers[ns] = inf
	}
	return r
}

// Get returns the object namespace/name ("" namespace for a
// cluster-scoped kind), or a NotFound error (apierrors.IsNotFound) when
// the cache holds none.
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
	switch {
	case err != nil:
		return zero, fmt.Errorf("read %s %s from the cache: %w", r.resource, key, err)
	case !ok:
		return zero, apierrors.NewNotFound(r.resource, name)
	}
	return r.typed(obj)
}

// List returns the objects of namespace (every namespace the Reader
// caches when namespace is "") whose labels match selector
// (labels.Everything() for all), in no particular order.
func (r *Reader[T]) List(namespace string, selector labels.Selector) ([]T, error) {
	var out []T
	var typeErr error
	add := func(obj any) {
		t, err := r.typed(obj)
		if err != nil {
			typeErr = err
			return
		}
		out = append(out, t)
	}
	if namespace == "" {
		for _, inf := range r.informers {
			if err := cache.ListAll(inf.GetIndexer(), selector, add); err != nil {
				return nil, err
			}
		}
		return out, typeErr
	}
	inf, err := r.informer(namespace)
	if err != nil {
		return nil, err
	}
	if err := cache.ListAllByNamespace(inf.GetIndexer(), namespace, selector, add); err != nil {
		return nil, err
	}
	return out, typeErr
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
