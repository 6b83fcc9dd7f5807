package runtime

import (
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/clients"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/migration"
)

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

// of returns the Runnable that keeps gr's stored objects in its CRD's
// storage version (migration.Migrator.Keep).
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
	return RunnableFunc(m.Keep)
}
