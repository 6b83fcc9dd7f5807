package runtime

import (
	"slices"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// firstQueue is the storage under a controller's work queue: two FIFOs,
// and keys the urgent function picks go first. The controller calls a key
// urgent while its object lacks the finalizer the kind needs, so a new
// object is protected before any other queued work runs (see
// Controller.finalizeFirst). workqueue.Typed calls every method under its
// own lock, from one goroutine at a time.
type firstQueue struct {
	urgent func(cache.ObjectName) bool
	first  []cache.ObjectName
	rest   []cache.ObjectName
}

var _ workqueue.Queue[cache.ObjectName] = (*firstQueue)(nil)

// Push adds a key that is not queued.
func (q *firstQueue) Push(key cache.ObjectName) {
	if q.urgent(key) {
		q.first = append(q.first, key)
		return
	}
	q.rest = append(q.rest, key)
}

// Touch is a queued key added again: it moves ahead when it became urgent
// (an owned object's event queued the owner before the owner's own add).
func (q *firstQueue) Touch(key cache.ObjectName) {
	i := slices.Index(q.rest, key)
	if i < 0 || !q.urgent(key) {
		return
	}
	q.rest = slices.Delete(q.rest, i, i+1)
	q.first = append(q.first, key)
}

// Len is the number of queued keys.
func (q *firstQueue) Len() int { return len(q.first) + len(q.rest) }

// Pop takes the oldest urgent key, else the oldest other one; the
// workqueue calls it only when Len > 0.
func (q *firstQueue) Pop() cache.ObjectName {
	from := &q.rest
	if len(q.first) > 0 {
		from = &q.first
	}
	key := (*from)[0]
	(*from)[0] = cache.ObjectName{}
	*from = (*from)[1:]
	return key
}
