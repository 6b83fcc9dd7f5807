package runtime

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/cachefill"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/owned"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/ownwrites"
)

// memoTTL bounds how long an apply not yet seen by the cache is trusted:
// an object created and deleted again before the cache saw either is
// applied again after it.
const memoTTL = time.Minute

// ownedStore implements plug.OwnedStore for one controller on the
// shared caches of its owned kinds. It counts its writes in
// opgen_api_writes_total: each applied or created object as "descendant",
// each deleted one as "delete" and each pruned one as "prune".
//
// It judges "already applied" from the cache, not from process memory, so
// a restart over converged objects writes nothing. The cached object must
// carry the declaration's hash (plug.AppliedHashAnnotation), and the
// operator's managedFields entry must hold exactly the fields of the body.
// With server-side apply, another writer that changes a field the operator
// owns takes it out of that entry.
type ownedStore struct {
	op           *Operator
	controller   string
	fieldManager string
	owns         map[schema.GroupVersionKind]*kindCache
	// ownerBucket is the bucket label of an owned object's owner (sharded).
	ownerBucket func(owned metav1.Object) string
	// wakeOwner wakes the owner of an owned object, for an event that
	// came during an apply of it and was not the apply's.
	wakeOwner func(gvk schema.GroupVersionKind, owned metav1.Object)
	count     func(what string)

	mu sync.Mutex
	// fields holds, by owned object, the hash of the field set its current
	// declaration gives: learned from an apply's answer, or from the schema
	// once after a start.
	fields map[types.UID]declared
	// pending holds the applies the cache has not seen yet.
	pending map[plug.ObjectKey]pendingApply
	// changes are the owners whose handler created or deleted an owned object now.
	changes ownwrites.Changes
}

func newOwnedStore(op *Operator, controller string, wakeOwner func(schema.GroupVersionKind, metav1.Object), ownerBucket func(metav1.Object) string) *ownedStore {
	return &ownedStore{op: op, controller: controller, fieldManager: op.opts.Name,
		owns: map[schema.GroupVersionKind]*kindCache{}, ownerBucket: ownerBucket, wakeOwner: wakeOwner,
		count:  func(what string) { op.metrics.Writes.WithLabelValues(controller, what).Inc() },
		fields: map[types.UID]declared{}, pending: map[plug.ObjectKey]pendingApply{}}
}

// declared is the field set of an object's declaration.
type declared struct {
	hash   string // the declaration's
	fields uint64 // cachefill.FieldsHash of the field set its apply records
}

// pendingApply bridges the moment between an apply and its watch event.
type pendingApply struct {
	hash   string
	before string // resource version the cache showed when applying
	at     time.Time
}

var _ plug.OwnedStore = (*ownedStore)(nil)

func (s *ownedStore) Namespaced(gvk schema.GroupVersionKind) (bool, error) {
	kc, ok := s.owns[gvk]
	if !ok {
		return false, fmt.Errorf("controller %s declared a %s, a kind it does not own: add +opgen:controller:owns=%s to the type (ControllerOptions.Owns)",
			s.controller, gvk.Kind, markerKind(gvk))
	}
	return kc.namespaced, nil
}

func (s *ownedStore) Applied(k plug.ObjectKey, hash string, body func() (*unstructured.Unstructured, error)) bool {
	kc, ok := s.owns[k.GVK]
	if !ok {
		return false
	}
	cached, found := kc.get(k.Namespace, k.Name)
	if up, sure := s.inFlight(k, hash, cached, found); sure {
		return up
	}
	if !found {
		return false
	}
	have, applied, ok := cachefill.OwnApply(cached, s.fieldManager, plug.AppliedHashAnnotation)
	if !ok || applied != hash {
		return false
	}
	want, ok := s.declaredFields(cached.GetUID(), hash, body)
	return ok && have == want
}

// inFlight answers for an object the store applied a moment ago whose
// apply the cache has not shown yet; sure is false otherwise.
func (s *ownedStore) inFlight(k plug.ObjectKey, hash string, cached metav1.Object, found bool) (up, sure bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pending[k]
	if !ok {
		return false, false
	}
	fresh := p.hash == hash && s.op.opts.Clock.Since(p.at) < memoTTL
	switch {
	case fresh && !found:
		return true, true // created a moment ago
	case fresh && cached.GetResourceVersion() == p.before:
		return true, true // changed a moment ago
	}
	delete(s.pending, k) // the cache caught up, or the declaration changed
	return false, false
}

// declaredFields returns the field set hash of the declaration hash of the
// object uid: remembered, or computed from its body once.
func (s *ownedStore) declaredFields(uid types.UID, hash string, body func() (*unstructured.Unstructured, error)) (uint64, bool) {
	s.mu.Lock()
	d, ok := s.fields[uid]
	s.mu.Unlock()
	if ok && d.hash == hash {
		return d.fields, true
	}
	u, err := body()
	if err != nil {
		return 0, false
	}
	sum, err := s.op.schemas.Of(u)
	if err != nil {
		s.op.log.V(1).Info("cannot tell the field set of an owned object from its schema; applying it", "kind", u.GetKind(), "error", err.Error())
		return 0, false
	}
	s.remember(uid, hash, sum)
	return sum, true
}

func (s *ownedStore) remember(uid types.UID, hash string, fields uint64) {
	s.mu.Lock()
	s.fields[uid] = declared{hash: hash, fields: fields}
	s.mu.Unlock()
}

func (s *ownedStore) Apply(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return s.write(ctx, obj, func(ri dynamic.ResourceInterface) (*unstructured.Unstructured, error) {
		return ri.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: s.fieldManager, Force: true})
	})
}

func (s *ownedStore) Create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	got, err := s.write(ctx, obj, func(ri dynamic.ResourceInterface) (*unstructured.Unstructured, error) {
		return ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: s.fieldManager})
	})
	if err == nil {
		s.changed(ctx, plug.ObjectKey{GVK: obj.GroupVersionKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}, "created") // even over a stale cached object of the name
	}
	return got, err
}

// changed records an owned object created or deleted (how) by a
// handler's write now.
func (s *ownedStore) changed(ctx context.Context, obj plug.ObjectKey, how string) {
	if owner, ok := plug.WrittenNow(ctx); ok {
		s.changes.Mark(owner, objectName(obj.GVK.Kind, obj.Namespace, obj.Name)+" "+how)
	}
}

// write writes obj, an owned object, with write, and remembers what the
// server answered.
func (s *ownedStore) write(ctx context.Context, obj *unstructured.Unstructured,
	write func(dynamic.ResourceInterface) (*unstructured.Unstructured, error)) (*unstructured.Unstructured, error) {
	k := plug.ObjectKey{GVK: obj.GroupVersionKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
	kc, ok := s.owns[k.GVK]
	if !ok {
		_, err := s.Namespaced(k.GVK)
		return nil, err
	}
	var before string
	if cached, found := kc.get(k.Namespace, k.Name); found {
		before = cached.GetResourceVersion()
	}
	_, written := kc.writes.NewerThan(cache.ObjectName{Namespace: k.Namespace, Name: k.Name}, "", false)
	if kc.sharded {
		// In its owner's bucket: the member holding it caches it.
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[s.op.sharding.keys.Label] = s.ownerBucket(obj)
		obj.SetLabels(labels)
	}
	key := cache.ObjectName{Namespace: k.Namespace, Name: k.Name}
	kc.writes.Begin(key)
	got, err := write(s.op.kube.Dynamic.Resource(kc.gvr).Namespace(k.Namespace))
	if kc.writes.End(key, got, err == nil, before) {
		s.wakeOwner(k.GVK, obj)
	}
	if err != nil {
		return nil, err
	}
	s.count("descendant")
	if before == "" && !written {
		s.changed(ctx, k, "created") // an owned object the cache did not hold
	}
	hash := obj.GetAnnotations()[plug.AppliedHashAnnotation]
	if fields, _, ok := cachefill.OwnApply(got, s.fieldManager, plug.AppliedHashAnnotation); ok {
		s.remember(got.GetUID(), hash, fields)
	}
	s.mu.Lock()
	s.pending[k] = pendingApply{hash: hash, before: before, at: s.op.opts.Clock.Now()}
	s.mu.Unlock()
	return got, nil
}

func (s *ownedStore) Prune(ctx context.Context, owner types.UID, keep map[plug.ObjectKey]bool, prune func(schema.GroupVersionKind) bool) (int, error) {
	deleted := 0
	for gvk, kc := range s.owns {
		if !prune(gvk) {
			continue
		}
		objs, err := kc.ownedBy(owner)
		if err != nil {
			return deleted, err
		}
		for _, obj := range objs {
			m, err := meta.Accessor(obj)
			if err != nil {
				continue
			}
			k := plug.ObjectKey{GVK: gvk, Namespace: m.GetNamespace(), Name: m.GetName()}
			if keep[k] || m.GetDeletionTimestamp() != nil || kc.writes.Deleted.Hidden(m.GetUID()) {
				continue
			}
			if _, err := s.delete(ctx, kc, k, m.GetUID(), metav1.DeletePropagationBackground); err != nil {
				return deleted, err
			}
			s.count("prune")
			deleted++
		}
	}
	return deleted, nil
}

// Delete deletes the owned object k, as the action's DeleteNow asks.
func (s *ownedStore) Delete(ctx context.Context, k plug.ObjectKey, uid types.UID, propagation metav1.DeletionPropagation) error {
	kc, ok := s.owns[k.GVK]
	if !ok {
		_, err := s.Namespaced(k.GVK)
		return err
	}
	deleted, err := s.delete(ctx, kc, k, uid, propagation)
	if deleted {
		s.changed(ctx, k, "deleted")
	}
	if err == nil {
		s.count("delete")
	}
	return err
}

// delete deletes k if its UID is uid; deleted is false when it was gone
// or another object had taken its name.
func (s *ownedStore) delete(ctx context.Context, kc *kindCache, k plug.ObjectKey, uid types.UID, propagation metav1.DeletionPropagation) (deleted bool, err error) {
	kc.writes.Deleted.Begin(uid)
	err = s.op.kube.Dynamic.Resource(kc.gvr).Namespace(k.Namespace).Delete(ctx, k.Name, metav1.DeleteOptions{
		Preconditions:     &metav1.Preconditions{UID: &uid},
		PropagationPolicy: &propagation,
	})
	if err != nil {
		kc.writes.Deleted.Failed(uid)
	}
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return false, fmt.Errorf("delete %s %s: %w", k.GVK.Kind, k.Name, err)
	}
	s.forget(k, uid)
	return err == nil, nil
}

// forget drops the memory of an object the cache saw deleted.
func (s *ownedStore) forget(k plug.ObjectKey, uid types.UID) {
	s.mu.Lock()
	delete(s.pending, k)
	delete(s.fields, uid)
	s.mu.Unlock()
}

// The store reads its kinds' caches: kindCache is in caches.go.

// get returns the cached object namespace/name, as metadata.
func (kc *kindCache) get(namespace, name string) (metav1.Object, bool) {
	inf := kc.informerFor(namespace)
	if inf == nil {
		return nil, false
	}
	k := name
	if namespace != "" {
		k = namespace + "/" + name
	}
	obj, ok, err := inf.GetIndexer().GetByKey(k)
	if err != nil || !ok {
		return nil, false
	}
	m, err := meta.Accessor(obj)
	return m, err == nil
}

func (kc *kindCache) informerFor(namespace string) cache.SharedIndexInformer {
	if inf, ok := kc.informers[AllNamespaces]; ok {
		return inf
	}
	return kc.informers[namespace]
}

// ownedBy returns the cached objects whose controller owner is uid.
func (kc *kindCache) ownedBy(uid types.UID) ([]any, error) {
	var out []any
	for _, inf := range kc.informers {
		if kc.lean[inf] {
			out = append(out, kc.owners.Of(uid, inf)...)
			continue
		}
		objs, err := owned.ByController(inf, uid)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}
