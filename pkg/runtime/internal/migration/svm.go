package migration

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// viaSVM migrates with a StorageVersionMigration when the API server
// serves them. done is false when it does not, or when no migrator starts
// the migration within SVMStart: the rewrite takes over. It stops with
// ErrStorageMoved when moved says so.
func (m *Migrator) viaSVM(ctx context.Context, crd *unstructured.Unstructured, storage string, moved func(context.Context) error) (done bool, err error) {
	if _, err := m.Discovery.ServerResourcesForGroupVersion(svmResource.GroupVersion().String()); err != nil {
		return false, nil
	}
	svms := m.Dynamic.Resource(svmResource)
	name := fmt.Sprintf("%s-%s-%s", m.Resource.String(), storage, crd.GetResourceVersion())
	svm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": svmResource.GroupVersion().String(), "kind": "StorageVersionMigration",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"resource": map[string]any{"group": m.Resource.Group, "resource": m.Resource.Resource}},
	}}
	if _, err := svms.Create(ctx, svm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		if apierrors.IsForbidden(err) {
			m.Log.Info("may not create a StorageVersionMigration; writing the objects again instead", "error", err.Error())
			return false, nil
		}
		return false, fmt.Errorf("create the StorageVersionMigration %s: %w", name, err)
	}
	started := time.Now()
	startLimit := orDefault(m.SVMStart, 30*time.Second)
	var result string
	err = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		if err := moved(ctx); err != nil {
			return false, err
		}
		got, err := svms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			cm, _ := c.(map[string]any)
			if cm["status"] != "True" {
				continue
			}
			switch cm["type"] {
			case "Succeeded", "Failed":
				result = cm["type"].(string)
				return true, nil
			case "Running":
				started = time.Time{} // running: no start limit any more
			}
		}
		if !started.IsZero() && time.Since(started) > startLimit {
			result = "NotStarted"
			return true, nil
		}
		return false, nil
	})
	if errors.Is(err, ErrStorageMoved) {
		_ = svms.Delete(ctx, name, metav1.DeleteOptions{}) // a migration to the old storage version
	}
	if err != nil {
		return false, err
	}
	switch result {
	case "Succeeded":
		return true, nil
	case "NotStarted":
		m.Log.Info("no migrator started the StorageVersionMigration (is the controller manager's storage-version-migrator-controller running?); writing the objects again instead", "migration", name, "waited", startLimit)
		_ = svms.Delete(ctx, name, metav1.DeleteOptions{})
		return false, nil
	}
	return false, fmt.Errorf("the StorageVersionMigration %s failed; see its status", name)
}
