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

	"github.com/opgen-sdk/opgen/pkg/plug"
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

	mu   sync.Mutex
	memo map[plug.ObjectKey]applied
}

// applied is what the store remembers of its last apply of an object, to
// bridge the moment before the cache sees it and to notice spec drift.
type applied struct {
	hash       string
	uid        types.UID
	generation int64
	at         time.Time
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
	m, remembered := s.memo[k]
	s.mu.Unlock()
	return s.upToDate(cached, found, m, remembered, hash)
}

func (s *descendantStore) Apply(ctx context.Context, obj *unstructured.Unstructured) error {
	k := plug.ObjectKey{GVK: obj.GroupVersionKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
	kc, ok := s.owns[k.GVK]
	if !ok {
		_, err := s.Namespaced(k.GVK)
		return err
	}
	got, err := s.op.dynamic.Resource(kc.gvr).Namespace(k.Namespace).Apply(ctx, k.Name, obj,
		metav1.ApplyOptions{FieldManager: s.fieldManager, Force: true})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.memo[k] = applied{hash: obj.GetAnnotations()[plug.AppliedHashAnnotation], uid: got.GetUID(), generation: got.GetGeneration(), at: s.op.opts.Clock.Now()}
	s.mu.Unlock()
	return nil
}

// upToDate reports whether applying a body with hash would change nothing.
func (s *descendantStore) upToDate(cached metav1.Object, found bool, m applied, remembered bool, hash string) bool {
	if !found {
		return remembered && m.hash == hash && s.op.opts.Clock.Since(m.at) < memoTTL
	}
	if cached.GetAnnotations()[plug.AppliedHashAnnotation] == hash {
		// Ours; re-apply only when its spec moved since our last apply.
		return !remembered || m.uid != cached.GetUID() || m.generation == cached.GetGeneration()
	}
	// The cache has not seen our last apply yet.
	return remembered && m.hash == hash && m.uid == cached.GetUID()
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
