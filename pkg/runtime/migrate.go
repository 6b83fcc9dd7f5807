package runtime

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/clients"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/migration"
)

// storageCheckEvery is how often the leader looks again whether a kind's
// CRD stores objects in an older version, besides every change of the CRD
// it watches.
const storageCheckEvery = 10 * time.Minute

// migrations are the storage migrations of an operator's custom kinds,
// which its leader runs.
type migrations struct {
	kube     *clients.Set
	log      logr.Logger
	recorder events.EventRecorder
	written  *prometheus.CounterVec // objects written again, by resource
}

func newMigrations(o *Operator) *migrations {
	return &migrations{kube: o.kube, log: o.log.WithName("storage-migration"), recorder: o.recorder,
		written: SharedCollector(o, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "opgen_storage_migration_objects_total",
			Help: "Objects written again to move them to their CRD's storage version, by resource.",
		}, []string{"resource"}))}
}

// runnables returns one storage migration for each custom kind with a
// controller.
func (ms *migrations) runnables(controllers []runner) []Runnable {
	var out []Runnable
	seen := map[schema.GroupResource]bool{}
	for _, c := range controllers {
		if k, ok := c.(interface{ groupResource() schema.GroupResource }); ok {
			gr := k.groupResource()
			if !seen[gr] {
				seen[gr] = true
				out = append(out, ms.of(gr))
			}
		}
	}
	return out
}

func (c *Controller[T]) groupResource() schema.GroupResource { return c.kind.GVR().GroupResource() }

// of returns the Runnable that migrates gr's stored objects
// to its CRD's storage version (package migration): at once, then on
// every change of the CRD (an upgrade that moves the storage version
// while the operator runs) and every storageCheckEvery, retrying a
// failure with a backoff of up to a minute. A migration that the storage
// version moved away from stops, and the next starts at once.
func (ms *migrations) of(gr schema.GroupResource) Runnable {
	written := ms.written.WithLabelValues(gr.String())
	m := &migration.Migrator{
		Dynamic: ms.kube.Dynamic, Discovery: ms.kube.Discovery, Resource: gr,
		Log:      ms.log,
		Migrated: func(n int) { written.Add(float64(n)) },
		Event: func(crd *unstructured.Unstructured, eventtype, reason, action, note string) {
			ms.recorder.Eventf(crd, nil, eventtype, reason, action, "%s", note)
		},
	}
	return RunnableFunc(func(ctx context.Context) error {
		changed := ms.crdChanges(ctx, gr)
		backoff := wait.Backoff{Duration: 2 * time.Second, Factor: 2, Steps: 100, Cap: time.Minute}
		for {
			next := storageCheckEvery
			_, err := m.Run(ctx)
			switch {
			case err == nil || ctx.Err() != nil:
			case errors.Is(err, migration.ErrStorageMoved):
				// An upgrade moved it on: migrate to the new one now.
				m.Log.Info("the storage version moved during the migration; migrating to the new one", "resource", gr.String(), "reason", err.Error())
				next = 0
			case apierrors.IsForbidden(err):
				m.Log.Info("storage migration is off: the operator may not read or write its CRD; grant get, list, watch and patch on its customresourcedefinition, update on its status, list and update on the kind (the generated ClusterRole does), or pass --migrate-storage=false",
					"resource", gr.String(), "error", err.Error(), "nextTry", next)
			default:
				next = backoff.Step()
				m.Log.Error(err, "storage migration failed; retrying", "resource", gr.String(), "in", next)
			}
			if !sleepCtx(ctx, next, changed) {
				return nil
			}
		}
	})
}

// crdChanges watches the CRD of gr alone (a field selector on its name,
// which RBAC can grant by name) until ctx ends, and sends on the channel
// it returns when the CRD changes.
func (ms *migrations) crdChanges(ctx context.Context, gr schema.GroupResource) <-chan struct{} {
	changed := make(chan struct{}, 1)
	crds := ms.kube.Dynamic.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	byName := func(opts *metav1.ListOptions) {
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", gr.String()).String()
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
	// check and before that list would otherwise wait storageCheckEvery.
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
