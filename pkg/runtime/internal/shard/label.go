package shard

import (
	"context"
	"encoding/json"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// enqueue queues an object to label while this replica leads: a
// standby's queue would only grow.
func (s *Sharder) enqueue(kind int, obj any) {
	if !s.leading.Load() {
		return
	}
	if m, err := meta.Accessor(obj); err == nil {
		s.queue.Add(item{kind: kind, namespace: m.GetNamespace(), name: m.GetName()})
	}
}

func (s *Sharder) processNext(ctx context.Context) bool {
	it, quit := s.queue.Get()
	if quit {
		return false
	}
	defer s.queue.Done(it)
	if err := s.label(ctx, it); err != nil {
		if ctx.Err() != nil {
			return false // stopping: the next leader labels it
		}
		if !apierrors.IsNotFound(err) {
			s.env.Log.Error(err, "could not label an object with its bucket; retrying", "controller", s.kinds[it.kind].Controller, "namespace", it.namespace, "name", it.name)
			s.queue.AddRateLimited(it)
			return true
		}
	}
	s.queue.Forget(it)
	return true
}

// label writes an object's bucket label, once in its life.
func (s *Sharder) label(ctx context.Context, it item) error {
	k := s.kinds[it.kind]
	key := it.name
	if it.namespace != "" {
		key = it.namespace + "/" + it.name
	}
	found := false
	for _, inf := range k.Informers {
		if _, ok, _ := inf.GetStore().GetByKey(key); ok {
			found = true
			break
		}
	}
	if !found {
		return nil // labelled meanwhile, or gone
	}
	value := Label(KeyBucket(it.namespace, it.name))
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{s.env.Keys.Label: value}}})
	_, err := k.Resource.Namespace(it.namespace).Patch(ctx, it.name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// Transform keeps of an object what the sharder reads: its name and
// namespace. It is the transform of a Kind's informers.
func Transform(obj any) (any, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return obj, nil // a tombstone: kept as it is
	}
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), ResourceVersion: m.GetResourceVersion()}}, nil
}
