package runtime

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/cachefill"
)

// memoTTL bounds how long an apply not yet seen by the cache is trusted:
// an object created and deleted again before the cache saw either is
// applied again after it.
const memoTTL = time.Minute

// descendantStore implements plug.DescendantStore for one controller on
// the shared caches of its owned kinds.
type descendantStore struct {
	op           *Operator
	controller   string
	fieldManager string
	owns         map[schema.GroupVersionKind]*kindCache
	// ownerBucket is the bucket label of a descendant's owner (sharded).
	ownerBucket func(descendant metav1.Object) string

	mu   sync.Mutex
	memo map[plug.ObjectKey]applied
}

// applied is what the store remembers of its last apply of an object: the
// declaration's hash and how the server recorded the apply (UID, resource
// version, the operator's managedFields entry), and the resource version
// the cache showed before it, to bridge the moment before the cache sees
// the write.
type applied struct {
	hash   string
	uid    types.UID
	rv     string // resource version the apply returned, or a later one found equal
	before string // resource version the cache showed when applying
	fields uint64 // hash of the operator's managedFields entry after the apply
	at     time.Time
}

var _ plug.DescendantStore = (*descendantStore)(nil)

func (s *descendantStore) Namespaced(gvk schema.GroupVersionKind) (bool, error) {
	kc, ok := s.owns[gvk]
	if !ok {
		return false, fmt.Errorf("controller %s declared a %s, a kind it does not own: add +opgen:controller:owns=%s to the type (ControllerOptions.Owns)",
			s.controller, gvk.Kind, markerKind(gvk))
	}
	return kc.namespaced, nil
}

func (s *descendantStore) Applied(k plug.ObjectKey, hash string) bool {
	kc, ok := s.owns[k.GVK]
	if !ok {
		return false
	}
	cached, found := kc.get(k.Namespace, k.Name)
	s.mu.Lock()
	defer s.mu.Unlock()
	m, remembered := s.memo[k]
	up, seen := s.upToDate(cached, found, m, remembered, hash)
	if up && seen != "" {
		m.rv = seen // compare by resource version until the object changes again
		s.memo[k] = m
	}
	return up
}

func (s *descendantStore) Apply(ctx context.Context, obj *unstructured.Unstructured) error {
	k := plug.ObjectKey{GVK: obj.GroupVersionKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
	kc, ok := s.owns[k.GVK]
	if !ok {
		_, err := s.Namespaced(k.GVK)
		return err
	}
	var before string
	if cached, found := kc.get(k.Namespace, k.Name); found {
		before = cached.GetResourceVersion()
	}
	if kc.sharded {
		// In its owner's bucket: the member holding it caches it.
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[s.op.shardKeys.Label] = s.ownerBucket(obj)
		obj.SetLabels(labels)
	}
	got, err := s.op.dynamic.Resource(kc.gvr).Namespace(k.Namespace).Apply(ctx, k.Name, obj,
		metav1.ApplyOptions{FieldManager: s.fieldManager, Force: true})
	if err != nil {
		return err
	}
	fields, _ := ownFields(got, s.fieldManager)
	s.mu.Lock()
	s.memo[k] = applied{
		hash:   obj.GetAnnotations()[plug.AppliedHashAnnotation],
		uid:    got.GetUID(),
		rv:     got.GetResourceVersion(),
		before: before,
		fields: fields,
		at:     s.op.opts.Clock.Now(),
	}
	s.mu.Unlock()
	return nil
}

// upToDate reports whether applying a body with hash would change nothing
// the operator owns. It compares the live object in the cache with what
// the last apply left: the same resource version means nothing changed;
// otherwise the operator's managedFields entry (the caches keep it, see
// Operator.transform) must be as the apply left it, since a foreign write
// to a field the operator owns (an edit, a replace, a removed label or
// annotation, a forced apply) takes that field out of the entry, while a
// status or other foreign field leaves it alone. seen is the cached
// resource version found up to date by that comparison.
//
// With no memory of an apply (the process restarted, or never applied this
// declaration), it is not up to date: the apply changes nothing on the
// server when nothing drifted.
func (s *descendantStore) upToDate(cached metav1.Object, found bool, m applied, remembered bool, hash string) (up bool, seen string) {
	if !remembered || m.hash != hash {
		return false, ""
	}
	fresh := s.op.opts.Clock.Since(m.at) < memoTTL
	if !found {
		return fresh, "" // created a moment ago: the cache has not seen it yet
	}
	rv := cached.GetResourceVersion()
	if fresh && rv == m.before {
		return true, "" // the cache has not seen the apply yet
	}
	if cached.GetUID() != m.uid {
		return false, ""
	}
	if rv == m.rv {
		return true, ""
	}
	fields, ok := ownFields(cached, s.fieldManager)
	if !ok || fields != m.fields || cached.GetAnnotations()[plug.AppliedHashAnnotation] != hash {
		return false, ""
	}
	return true, rv
}

// ownFields hashes the field set of manager's Apply entry in obj's
// managedFields; ok is false when there is none.
func ownFields(obj metav1.Object, manager string) (sum uint64, ok bool) {
	entries := obj.GetManagedFields()
	for i := range entries {
		if e := &entries[i]; cachefill.Own(e, manager) {
			h := fnv.New64a()
			if e.FieldsV1 != nil {
				h.Write(e.FieldsV1.GetRawBytes())
			}
			return h.Sum64(), true
		}
	}
	return 0, false
}

func (s *descendantStore) Prune(ctx context.Context, owner types.UID, keep map[plug.ObjectKey]bool) (int, error) {
	deleted := 0
	for gvk, kc := range s.owns {
		for _, inf := range kc.informers {
			objs, err := inf.GetIndexer().ByIndex(controllerUIDIndex, string(owner))
			if err != nil {
				return deleted, err
			}
			for _, obj := range objs {
				m, err := meta.Accessor(obj)
				if err != nil {
					continue
				}
				k := plug.ObjectKey{GVK: gvk, Namespace: m.GetNamespace(), Name: m.GetName()}
				if keep[k] || m.GetDeletionTimestamp() != nil {
					continue
				}
				if err := s.delete(ctx, kc, k, m.GetUID()); err != nil {
					return deleted, err
				}
				deleted++
			}
		}
	}
	return deleted, nil
}

func (s *descendantStore) delete(ctx context.Context, kc *kindCache, k plug.ObjectKey, uid types.UID) error {
	background := metav1.DeletePropagationBackground
	err := s.op.dynamic.Resource(kc.gvr).Namespace(k.Namespace).Delete(ctx, k.Name, metav1.DeleteOptions{
		Preconditions:     &metav1.Preconditions{UID: &uid},
		PropagationPolicy: &background,
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("prune %s %s: %w", k.GVK.Kind, k.Name, err)
	}
	s.forget(k)
	return nil
}

// forget drops the memory of an object the cache saw deleted.
func (s *descendantStore) forget(k plug.ObjectKey) {
	s.mu.Lock()
	delete(s.memo, k)
	s.mu.Unlock()
}
