package outage

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Relists are the watches that expired (410 Gone: the server compacted
// their resource version, as after an outage) and list again. Until the
// list is whole, their cache lags the server by what changed meanwhile,
// so the operator is not ready.
type Relists struct {
	mu      sync.Mutex
	expired map[telemetry.Watch]bool
}

// Failed records a watch's failure; an expired watch lists again.
func (r *Relists) Failed(w telemetry.Watch, err error) {
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.expired == nil {
		r.expired = map[telemetry.Watch]bool{}
	}
	r.expired[w] = true
}

// Listed records that w's list is whole: its last page, or the end of the
// initial events of a watch-list.
func (r *Relists) Listed(w telemetry.Watch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.expired, w)
}

// Waiting returns nil when no cache lists again, or the error readiness
// gives while some do.
func (r *Relists) Waiting() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.expired) == 0 {
		return nil
	}
	var names []string
	for w := range r.expired {
		names = append(names, fmt.Sprintf("%s of %s in %q", w.GVK.Kind, w.Controller, w.Namespace))
	}
	slices.Sort(names)
	return fmt.Errorf("caches list again after their watch expired (410 Gone), and lag the API server until they have: %s", strings.Join(names, ", "))
}
