package migration

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// CheckEvery is how often Keep looks again whether the CRD stores
// objects in an older version, besides every change of the CRD it
// watches.
const CheckEvery = 10 * time.Minute

// Keep migrates m.Resource's stored objects to its CRD's storage version
// until ctx ends: at once, then on every change of the CRD (an upgrade
// that moves the storage version while the operator runs) and every
// CheckEvery, retrying a failure with a backoff of up to a minute. A
// migration that the storage version moved away from stops, and the next
// starts at once.
func (m *Migrator) Keep(ctx context.Context) error {
	changed := m.crdChanges(ctx)
	backoff := wait.Backoff{Duration: 2 * time.Second, Factor: 2, Steps: 100, Cap: time.Minute}
	for {
		next := CheckEvery
		_, err := m.Run(ctx)
		switch {
		case err == nil || ctx.Err() != nil:
		case errors.Is(err, ErrStorageMoved):
			// An upgrade moved it on: migrate to the new one now.
			m.Log.Info("the storage version moved during the migration; migrating to the new one", "resource", m.Resource.String(), "reason", err.Error())
			next = 0
		case apierrors.IsForbidden(err):
			m.Log.Info("storage migration is off: the operator may not read or write its CRD; grant get, list, watch and patch on its customresourcedefinition, update on its status, list and update on the kind (the generated ClusterRole does), or pass --migrate-storage=false",
				"resource", m.Resource.String(), "error", err.Error(), "nextTry", next)
		default:
			next = backoff.Step()
			m.Log.Error(err, "storage migration failed; retrying", "resource", m.Resource.String(), "in", next)
		}
		if !sleepCtx(ctx, next, changed) {
			return nil
		}
	}
}

// crdChanges watches the CRD of m.Resource alone (a field selector on its name,
// which RBAC can grant by name) until ctx ends, and sends on the channel
// it returns when the CRD changes.
func (m *Migrator) crdChanges(ctx context.Context) <-chan struct{} {
	changed := make(chan struct{}, 1)
	crds := m.Dynamic.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	byName := func(opts *metav1.ListOptions) {
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", m.Resource.String()).String()
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (kruntime.Object, error) {
			byName(&opts)
			return crds.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			byName(&opts)
			return crds.Watch(ctx, opts)
		},
	}
	wake := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	// The first list's Add wakes it too: a CRD changed after the first
	// check and before that list would otherwise wait CheckEvery.
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &unstructured.Unstructured{},
		Handler:       cache.ResourceEventHandlerFuncs{AddFunc: func(any) { wake() }, UpdateFunc: func(_, _ any) { wake() }},
	})
	go informer.RunWithContext(ctx)
	return changed
}

// sleepCtx waits d, or until wake receives; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-wake:
	}
	return true
}
