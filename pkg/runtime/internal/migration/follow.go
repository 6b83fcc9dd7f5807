package migration

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// small reports whether the resource has at most RewriteUpTo objects, so
// that writing them again is quicker than a StorageVersionMigration.
func (m *Migrator) small(ctx context.Context, storage string) (bool, error) {
	if m.RewriteUpTo < 0 {
		return false, nil
	}
	list, err := m.Dynamic.Resource(m.Resource.WithVersion(storage)).List(ctx, metav1.ListOptions{Limit: int64(orDefault(m.RewriteUpTo, 500))})
	if err != nil {
		return false, fmt.Errorf("list %s: %w", m.Resource, err)
	}
	return list.GetContinue() == "", nil
}

// movedCheck returns a check, run during a migration to storage, that
// fails with ErrStorageMoved once the CRD's storage version is another.
// It reads the CRD at most once a second; a failed read passes, since
// trim checks again before it changes anything.
func (m *Migrator) movedCheck(storage string) func(context.Context) error {
	var last time.Time
	return func(ctx context.Context) error {
		if time.Since(last) < time.Second {
			return nil
		}
		last = time.Now()
		crd, err := m.Dynamic.Resource(crdResource).Get(ctx, m.Resource.String(), metav1.GetOptions{})
		if err != nil {
			return nil
		}
		if now, _ := versions(crd); now != storage {
			return fmt.Errorf("%w: %s from %s to %s; migrating again", ErrStorageMoved, m.Resource, storage, now)
		}
		return nil
	}
}

// objects says how many objects n is, for an Event.
func objects(n int) string {
	if n == 1 {
		return "1 object"
	}
	return fmt.Sprintf("%d objects", n)
}
