// Package migration moves the stored objects of a custom resource to its
// CRD's storage version, then trims the CRD's status.storedVersions to
// that version alone, so that older versions can be removed from the CRD.
//
// Where the API server serves storagemigration.k8s.io/v1 and the
// controller manager runs its migrator, a StorageVersionMigration does the
// work. Otherwise each object is written again as it was read, which the
// API server stores in the storage version: paged, at a bounded rate, and
// resumable after a restart from the last object recorded in the CRD's
// annotation ProgressAnnotation.
package migration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
)

// ProgressAnnotation holds, on the CRD, how far a rewrite came: the
// storage version and the last object written, as JSON.
const ProgressAnnotation = "opgen.dev/storage-migration"

var (
	crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	svmResource = schema.GroupVersionResource{Group: "storagemigration.k8s.io", Version: "v1", Resource: "storageversionmigrations"}
)

// Migrator migrates one custom resource.
type Migrator struct {
	Dynamic   dynamic.Interface
	Discovery discovery.DiscoveryInterface
	// Resource is the custom resource, such as todos.todo.example.com.
	Resource schema.GroupResource
	// Rate bounds the rewrites per second. Default 50.
	Rate float64
	// Log receives progress and failures.
	Log logr.Logger
	// Event records an Event about the CRD; nil for none. Its action
	// names the storage version, such as MigrateToV1: the Events of
	// migrations to two versions are not one series, whose note would
	// stay the first one's.
	Event func(crd *unstructured.Unstructured, eventtype, reason, action, note string)
	// Migrated counts the objects written again; nil for none.
	Migrated func(n int)
	// SVMStart bounds the wait for a StorageVersionMigration to start
	// running before the rewrite takes over. Default 30s.
	SVMStart time.Duration
	// RewriteUpTo is the most objects the Migrator writes again itself
	// without trying a StorageVersionMigration first. Default 500, one
	// page of the list; -1 tries the StorageVersionMigration always.
	// The controller manager runs one only once its garbage collector's
	// watch of the resource has passed the migration's start, which on a
	// quiet resource waits for the next watch bookmark, up to a minute:
	// longer than 500 rewrites at the default rate take.
	RewriteUpTo int
}

// ErrStorageMoved says that the CRD's storage version changed during a
// migration, which stopped there: the next one starts at the new
// storage version instead of finishing the old one first.
var ErrStorageMoved = errors.New("the storage version changed during the migration")

// Run migrates when the CRD stores objects in versions other than its
// storage version, and reports what it did. A resource without a CRD
// (a built-in kind) is left alone.
func (m *Migrator) Run(ctx context.Context) (migrated int, err error) {
	crds := m.Dynamic.Resource(crdResource)
	crd, err := crds.Get(ctx, m.Resource.String(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the CRD %s: %w", m.Resource, err)
	}
	storage, stored := versions(crd)
	if storage == "" || slices.Equal(stored, []string{storage}) {
		return 0, nil
	}
	log := m.Log.WithValues("resource", m.Resource.String(), "storedVersions", stored, "storage", storage)
	log.Info("migrating the stored objects to the storage version")
	m.event(crd, storage, "StorageMigrationStarted", fmt.Sprintf("objects stored as %v are written again as %s", stored, storage))
	start := time.Now()
	moved := m.movedCheck(storage)
	via, done := "StorageVersionMigration", false
	small, err := m.small(ctx, storage)
	if err == nil && !small {
		done, err = m.viaSVM(ctx, crd, storage, moved)
	}
	if err != nil {
		return 0, err
	}
	if !done {
		via = "rewrite"
		if migrated, err = m.rewrite(ctx, crd, storage, moved); err != nil {
			return migrated, err
		}
	}
	if err := m.trim(ctx, storage); err != nil {
		return migrated, err
	}
	note := fmt.Sprintf("every object is stored as %s (%s, %s written, %v); status.storedVersions is [%s]", storage, via, objects(migrated), time.Since(start).Round(time.Millisecond), storage)
	log.Info("migrated the stored objects", "via", via, "written", migrated, "took", time.Since(start).Round(time.Millisecond))
	m.event(crd, storage, "StorageMigrated", note)
	return migrated, nil
}

// event records a Normal Event about a migration to storage.
func (m *Migrator) event(crd *unstructured.Unstructured, storage, reason, note string) {
	if m.Event != nil {
		m.Event(crd, "Normal", reason, "MigrateTo"+strings.ToUpper(storage[:1])+storage[1:], note)
	}
}

// versions returns the CRD's storage version and status.storedVersions.
func versions(crd *unstructured.Unstructured) (storage string, stored []string) {
	vs, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range vs {
		if vm, ok := v.(map[string]any); ok && vm["storage"] == true {
			storage, _ = vm["name"].(string)
		}
	}
	stored, _, _ = unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
	return storage, stored
}

// trim sets status.storedVersions to the storage version, if it is still
// the CRD's storage version.
func (m *Migrator) trim(ctx context.Context, storage string) error {
	crds := m.Dynamic.Resource(crdResource)
	for {
		crd, err := crds.Get(ctx, m.Resource.String(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if now, _ := versions(crd); now != storage {
			return fmt.Errorf("%w: %s from %s to %s; migrating again", ErrStorageMoved, m.Resource, storage, now)
		}
		if err := unstructured.SetNestedStringSlice(crd.Object, []string{storage}, "status", "storedVersions"); err != nil {
			return err
		}
		_, err = crds.UpdateStatus(ctx, crd, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) {
			return err
		}
	}
}

// progress is ProgressAnnotation's value.
type progress struct {
	Version string `json:"version"`
	After   string `json:"after"`
}

// rewrite writes every object again as it was read, in the storage
// version, after the last one ProgressAnnotation records.
func (m *Migrator) rewrite(ctx context.Context, crd *unstructured.Unstructured, storage string, moved func(context.Context) error) (int, error) {
	var p progress
	if raw, ok := crd.GetAnnotations()[ProgressAnnotation]; ok && json.Unmarshal([]byte(raw), &p) == nil && p.Version != storage {
		p = progress{}
	}
	res := m.Dynamic.Resource(m.Resource.WithVersion(storage))
	limiter := rate.NewLimiter(rate.Limit(orDefault(m.Rate, 50)), 1)
	written, cont := 0, ""
	for {
		list, err := res.List(ctx, metav1.ListOptions{Limit: 500, Continue: cont})
		if err != nil {
			return written, fmt.Errorf("list %s: %w", m.Resource, err)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			key := obj.GetNamespace() + "/" + obj.GetName()
			if p.After != "" && key <= p.After {
				continue // written before a restart
			}
			if err := limiter.Wait(ctx); err != nil {
				return written, err
			}
			if err := moved(ctx); err != nil {
				return written, err
			}
			_, err := res.Namespace(obj.GetNamespace()).Update(ctx, obj, metav1.UpdateOptions{FieldManager: "opgen-storage-migration"})
			switch {
			case err == nil:
				written++
				if m.Migrated != nil {
					m.Migrated(1)
				}
			case apierrors.IsConflict(err), apierrors.IsNotFound(err):
				// written or deleted since the list: stored anew either way
			default:
				return written, fmt.Errorf("write %s %s again: %w", m.Resource, key, err)
			}
			if written%100 == 0 && written > 0 {
				m.record(ctx, progress{Version: storage, After: key})
			}
		}
		if cont = list.GetContinue(); cont == "" {
			return written, nil
		}
	}
}

// record writes the progress into the CRD's annotation; a failure only
// costs rewrites after a restart.
func (m *Migrator) record(ctx context.Context, p progress) {
	data, _ := json.Marshal(p)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{ProgressAnnotation: string(data)}}})
	if _, err := m.Dynamic.Resource(crdResource).Patch(ctx, m.Resource.String(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		m.Log.V(1).Info("could not record the migration's progress", "error", err.Error())
	}
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
