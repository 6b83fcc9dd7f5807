package runtime

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
)

// events enqueues adds, updates that pass the filter, and forgets deletes.
// What the initial list adds goes to the bulk lane, the rest to the user
// lane.
func (c *Controller[T]) events() cache.ResourceEventHandler {
	filter := c.opts.UpdateFilter // nil: GenerationOrMetadataChanged
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) { c.enqueue(obj, !initial) },
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(T)
			n, ok2 := newObj.(T)
			if !ok1 || !ok2 {
				return
			}
			if c.writes.Seen(cache.ObjectName{Namespace: n.GetNamespace(), Name: n.GetName()}, n.GetResourceVersion()) {
				return // the controller's own write
			}
			if (filter != nil && filter(o, n)) || (filter == nil && GenerationOrMetadataChanged(o, n)) {
				c.enqueue(newObj, true)
			}
		},
		DeleteFunc: func(obj any) {
			key, err := cache.DeletionHandlingObjectToName(obj)
			if err != nil {
				return
			}
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if last, ok := obj.(T); ok && c.op.member != nil {
				if b, ok := c.op.shardKeys.BucketOf(last); !ok || !c.op.member.Holds(b) {
					// It left this member's share: not a deletion.
					c.forget(key)
					return
				}
			}
			if last, ok := obj.(T); ok {
				c.writes.Forget(key)
				if c.missedDelete(last) {
					c.mu.Lock()
					c.gone[key] = last
					c.mu.Unlock()
					c.wake(key, true)
				} else {
					c.mu.Lock()
					delete(c.deleting, last.GetUID())
					c.mu.Unlock()
				}
			}
			c.forget(key)
		},
	}
}

func (c *Controller[T]) enqueue(obj any, user bool) {
	if key, err := cache.ObjectToName(obj); err == nil {
		c.wake(key, user)
	}
}

// wake queues key, in the user lane when someone's change woke it.
func (c *Controller[T]) wake(key cache.ObjectName, user bool) {
	if user {
		c.marks.Mark(key)
	}
	c.queue.Add(key)
}

// own watches gvk and wakes the controller owner of each changed object.
func (c *Controller[T]) own(gvk schema.GroupVersionKind) error {
	kc, err := c.op.caches.kind(gvk, c.op.shardKeys != nil)
	if err != nil {
		return fmt.Errorf("runtime: controller %s owns %w", c.name, err)
	}
	c.store.owns[gvk] = kc
	kc.stores = append(kc.stores, c.store)
	// The first reconciles judge this kind's applies by their field sets:
	// the schema they need is parsed while the caches fill.
	go c.op.schemas.Prepare(gvk)
	return c.handleAll(kc, func(m metav1.Object, deleted, initial bool) {
		key := cache.ObjectName{Namespace: m.GetNamespace(), Name: m.GetName()}
		if deleted {
			c.store.forget(plug.ObjectKey{GVK: gvk, Namespace: m.GetNamespace(), Name: m.GetName()}, m.GetUID())
		}
		owner, ok := c.ownerKey(m)
		if !ok || c.ownEvent(kc, key, m, deleted) {
			return // not ours, or the operator's own apply or prune: it wakes nobody
		}
		c.wake(owner, !initial)
	})
}

// ownerKey returns the key of the controller owner of m when it is of the
// controller's kind.
func (c *Controller[T]) ownerKey(m metav1.Object) (cache.ObjectName, bool) {
	ref := metav1.GetControllerOfNoCopy(m)
	if ref == nil {
		return cache.ObjectName{}, false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != c.kind.GVK.Group || ref.Kind != c.kind.GVK.Kind {
		return cache.ObjectName{}, false
	}
	ns := m.GetNamespace()
	if !c.kind.Namespaced {
		ns = ""
	}
	return cache.ObjectName{Namespace: ns, Name: ref.Name}, true
}

// ownEvent reports whether an event of the owned object m is the
// operator's own apply or prune. It is asked once, by the owner's
// controller.
func (c *Controller[T]) ownEvent(kc *kindCache, key cache.ObjectName, m metav1.Object, deleted bool) bool {
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
	return c.handleAll(kc, func(m metav1.Object, _, initial bool) {
		for _, key := range w.Map(m) {
			c.wake(key, !initial)
		}
	})
}

// handleAll calls f for every add, update (a new resourceVersion) and
// delete on kc's informers; initial tells the adds of the initial list.
func (c *Controller[T]) handleAll(kc *kindCache, f func(m metav1.Object, deleted, initial bool)) error {
	call := func(obj any, deleted, initial bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if m, err := meta.Accessor(obj); err == nil {
			f(m, deleted, initial)
		}
	}
	h := cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) { call(obj, false, initial) },
		UpdateFunc: func(oldObj, newObj any) {
			o, err1 := meta.Accessor(oldObj)
			n, err2 := meta.Accessor(newObj)
			if err1 == nil && err2 == nil && o.GetResourceVersion() != n.GetResourceVersion() {
				call(newObj, false, false)
			}
		},
		DeleteFunc: func(obj any) { call(obj, true, false) },
	}
	for _, inf := range kc.informers {
		if _, err := inf.AddEventHandler(h); err != nil {
			return err
		}
	}
	return nil
}
