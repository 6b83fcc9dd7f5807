package runtime

// The kinds a controller owns or watches wake its objects: a change to
// an owned object wakes its controller owner, one to a watched object
// the keys its Watch maps it to.

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// own watches gvk and wakes the controller owner of each changed object.
func (c *Controller[T]) own(gvk schema.GroupVersionKind) error {
	kc, err := c.op.caches.kind(gvk, c.op.sharding != nil)
	if err != nil {
		return fmt.Errorf("runtime: controller %s owns %w", c.name, err)
	}
	c.owned.owns[gvk] = kc
	kc.stores = append(kc.stores, c.owned)
	// The first reconciles judge this kind's applies by their field sets:
	// the schema they need is read while the caches fill.
	go c.op.schemas.Prepare(gvk)
	return c.handleAll(kc, func(old, m metav1.Object, deleted, initial bool) {
		key := cache.ObjectName{Namespace: m.GetNamespace(), Name: m.GetName()}
		if deleted {
			c.owned.forget(plug.ObjectKey{GVK: gvk, Namespace: m.GetNamespace(), Name: m.GetName()}, m.GetUID())
		}
		owner, ok := c.kind.ownerOf(m)
		if !ok || kc.ownEvent(key, m, deleted) {
			return // not ours, or the operator's own apply or prune: it wakes nobody
		}
		object := objectName(gvk.Kind, m.GetNamespace(), m.GetName())
		if old == nil {
			c.queue.Wake(owner, woken(telemetry.TriggerOwned, object, m, initial))
			return
		}
		c.queue.WakeUpdate(owner, update(telemetry.TriggerOwned, object, old, m))
	})
}

// ownerOf returns the key of the controller owner of m when it is of
// kind k.
func (k Kind[T]) ownerOf(m metav1.Object) (cache.ObjectName, bool) {
	ref := metav1.GetControllerOfNoCopy(m)
	if ref == nil {
		return cache.ObjectName{}, false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != k.GVK.Group || ref.Kind != k.GVK.Kind {
		return cache.ObjectName{}, false
	}
	ns := m.GetNamespace()
	if !k.Namespaced {
		ns = ""
	}
	return cache.ObjectName{Namespace: ns, Name: ref.Name}, true
}

// ownEvent reports whether an event of the owned object m is the
// operator's own apply or prune. It is asked once, by the owner's
// controller.
func (kc *kindCache) ownEvent(key cache.ObjectName, m metav1.Object, deleted bool) bool {
	if deleted {
		kc.writes.Forget(key)
		return kc.writes.Deleted.Gone(m.GetUID())
	}
	return kc.writes.Seen(key, m.GetResourceVersion())
}

// watch wakes the keys w.Map returns for each changed object of w.Kind.
func (c *Controller[T]) watch(w Watch) error {
	if w.Map == nil {
		return fmt.Errorf("runtime.Register: controller %s: Watch of %s has no Map function", c.name, w.Kind)
	}
	kc, err := c.op.caches.kind(w.Kind, false)
	if err != nil {
		return fmt.Errorf("runtime: controller %s watches %w", c.name, err)
	}
	return c.handleAll(kc, func(_, m metav1.Object, _, initial bool) {
		keys := w.Map(m)
		if len(keys) == 0 {
			return
		}
		t := woken(telemetry.TriggerWatched, objectName(w.Kind.Kind, m.GetNamespace(), m.GetName()), m, initial)
		for _, key := range keys {
			c.queue.Wake(key, t)
		}
	})
}

// handleAll calls f for every add, update (a new resourceVersion) and
// delete on kc's informers, with the object before an update (nil
// otherwise); initial tells the adds of the initial list.
func (c *Controller[T]) handleAll(kc *kindCache, f func(old, m metav1.Object, deleted, initial bool)) error {
	call := func(old metav1.Object, obj any, deleted, initial bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if m, err := meta.Accessor(obj); err == nil {
			f(old, m, deleted, initial)
		}
	}
	h := cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) { call(nil, obj, false, initial) },
		UpdateFunc: func(oldObj, newObj any) {
			o, err1 := meta.Accessor(oldObj)
			n, err2 := meta.Accessor(newObj)
			if err1 == nil && err2 == nil && o.GetResourceVersion() != n.GetResourceVersion() {
				call(o, newObj, false, false)
			}
		},
		DeleteFunc: func(obj any) { call(nil, obj, true, false) },
	}
	for _, inf := range kc.informers {
		if err := c.op.caches.handle(inf, h); err != nil {
			return err
		}
	}
	return nil
}
