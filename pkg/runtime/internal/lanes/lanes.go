// Package lanes is a controller's work queue: client-go's rate-limited
// queue over a FIFO per lane, so that a new object's finalizer and a
// change someone made go ahead of bulk work, and no lane is ever
// starved.
package lanes

import (
	"slices"
	"sync"
	"time"

	"github.com/opgen-sdk/opgen/pkg/telemetry"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// Keys is a controller's work queue: the keys of the objects to act on,
// with per-key backoff, served by lane.
type Keys struct {
	workqueue.TypedRateLimitingInterface[cache.ObjectName]
	marks    Marks
	triggers triggers
	clock    clock.PassiveClock
}

// Config configures Keys.
type Config struct {
	// Name names the queue in the workqueue metrics.
	Name    string
	Metrics workqueue.MetricsProvider
	Clock   clock.WithTicker
	// RateLimiter paces the retries of failed keys.
	RateLimiter workqueue.TypedRateLimiter[cache.ObjectName]
	// Urgent reports whether a key goes ahead of all others (but see
	// FinalizeBurst).
	Urgent func(cache.ObjectName) bool
	// Depth, when set, is told each lane's depth after every change.
	Depth func(lane string, depth int)
	// Settle, when set, settles each Update when a worker takes its key.
	Settle func(Update) telemetry.Trigger
}

// New returns the work queue cfg describes.
func New(cfg Config) *Keys {
	k := &Keys{clock: cfg.Clock, triggers: triggers{settle: cfg.Settle}}
	if k.clock == nil {
		k.clock = clock.RealClock{}
	}
	queue := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[cache.ObjectName]{
		Name: cfg.Name, MetricsProvider: cfg.Metrics, Clock: cfg.Clock,
		Queue: &Queue{Urgent: cfg.Urgent, Marks: &k.marks, Depth: cfg.Depth},
	})
	k.TypedRateLimitingInterface = workqueue.NewTypedRateLimitingQueueWithConfig(cfg.RateLimiter, workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{
		Name: cfg.Name, MetricsProvider: cfg.Metrics, Clock: cfg.Clock,
		DelayingQueue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[cache.ObjectName]{
			Name: cfg.Name, MetricsProvider: cfg.Metrics, Clock: cfg.Clock, Queue: queue,
		}),
	})
	return k
}

// Wake queues key for t, in the user lane when someone's change or a
// wake woke it.
func (k *Keys) Wake(key cache.ObjectName, t telemetry.Trigger) {
	k.triggers.note(key, t)
	switch t.Kind {
	case telemetry.TriggerStart, telemetry.TriggerPeriodic, telemetry.TriggerRequeue, telemetry.TriggerRetry:
	default:
		k.marks.Mark(key)
	}
	k.Add(key)
}

// WakeUpdate queues key for a change someone may have made, in the user
// lane. Whether it was the operator's own write (an echo) is settled when
// a worker takes the key (Config.Settle).
func (k *Keys) WakeUpdate(key cache.ObjectName, u Update) {
	k.triggers.noteUpdate(key, u)
	k.marks.Mark(key)
	k.Add(key)
}

// After queues key after d, for t (a periodic tick or a requeue); t is
// among the triggers of the first action that begins once d passed.
func (k *Keys) After(key cache.ObjectName, d time.Duration, t telemetry.Trigger) {
	if d <= 0 {
		k.triggers.note(key, t)
		k.Add(key)
		return
	}
	k.triggers.noteAt(key, k.clock.Now().Add(d), t)
	k.AddAfter(key, d)
}

// Retry queues key after its backoff: its action failed.
func (k *Keys) Retry(key cache.ObjectName) {
	k.triggers.note(key, telemetry.Trigger{Kind: telemetry.TriggerRetry})
	k.AddRateLimited(key)
}

// Triggers returns what woke key since the last call, and forgets it: a
// worker calls it when it takes the key.
func (k *Keys) Triggers(key cache.ObjectName) telemetry.Triggers {
	return k.triggers.take(key, k.clock.Now())
}

// Note adds ts to key's triggers without queueing it: an action that
// hands its key on (a finalizer added first) passes on its triggers.
func (k *Keys) Note(key cache.ObjectName, ts telemetry.Triggers) {
	for _, t := range ts {
		k.triggers.note(key, t)
	}
}

// Gone forgets what the queue keeps for key: its object is gone.
func (k *Keys) Gone(key cache.ObjectName) { k.triggers.forget(key) }

// Finished is told that the action on key ended, and whether it is
// retried (see Marks.Finished).
func (k *Keys) Finished(key cache.ObjectName, retried bool) { k.marks.Finished(key, retried) }

// Lanes of a controller's work queue, first served first.
const (
	// laneFinalize: the object lacks the finalizer its kind needs, so a
	// new object is protected before any other queued work runs (see
	// the runtime's finalizeFirst).
	laneFinalize = iota
	// laneUser: a change someone made. An add after the initial list, an
	// update that passes the filter, a delete, or a change to an owned or
	// watched object.
	laneUser
	// laneBulk: the initial list after a start, periodic reconciles and
	// requeues, and the retries of bulk work. A retry of a key served
	// from laneUser stays there (Marks.Finished).
	laneBulk
	lanes
)

// Names are the lanes' names, as opgen_workqueue_lane_depth labels them.
var Names = [lanes]string{"finalize", "user", "bulk"}

// userBurst is how many keys the user lane may serve in a row while bulk
// keys wait: one bulk key follows, so that bulk work is never starved.
const userBurst = 8

// FinalizeBurst is how many keys the finalize lane may serve in a row
// while other keys wait: one key of the other lanes follows. When objects
// are created faster than the workers write finalizers, a strict first
// lane would take the workers' whole time, and the first actions and
// Deletes of the objects it protected would wait for as long as the
// creates go on. A new object still waits for at most one other action
// every FinalizeBurst finalizers.
const FinalizeBurst = 4

// Queue is the storage under a controller's work queue: a FIFO per
// lane. workqueue.Typed calls its methods under its own lock, from one
// goroutine at a time.
type Queue struct {
	// Urgent reports whether a key belongs in laneFinalize.
	Urgent func(cache.ObjectName) bool
	// Marks are the keys that belong in laneUser.
	Marks *Marks
	// Depth, when set, is told each lane's depth after every change.
	Depth   func(lane string, depth int)
	fifo    [lanes][]cache.ObjectName
	burst   int // user keys served in a row while bulk keys waited
	urgents int // finalize keys served in a row while other keys waited
}

var _ workqueue.Queue[cache.ObjectName] = (*Queue)(nil)

func (q *Queue) lane(key cache.ObjectName) int {
	switch {
	case q.Urgent(key):
		return laneFinalize
	case q.Marks.take(key):
		return laneUser
	}
	return laneBulk
}

// Push adds a key that is not queued.
func (q *Queue) Push(key cache.ObjectName) {
	l := q.lane(key)
	q.fifo[l] = append(q.fifo[l], key)
	q.report(l)
}

// report tells Depth the depth of lanes ls.
func (q *Queue) report(ls ...int) {
	if q.Depth != nil {
		for _, l := range ls {
			q.Depth(Names[l], len(q.fifo[l]))
		}
	}
}

// Touch is a queued key added again: it moves to a lane ahead of its own
// when it became urgent, or someone changed its object.
func (q *Queue) Touch(key cache.ObjectName) {
	l := q.lane(key)
	for from := l + 1; from < lanes; from++ {
		if i := slices.Index(q.fifo[from], key); i >= 0 {
			q.fifo[from] = slices.Delete(q.fifo[from], i, i+1)
			q.fifo[l] = append(q.fifo[l], key)
			q.report(l, from)
			return
		}
	}
}

// Len is the number of queued keys.
func (q *Queue) Len() int { return len(q.fifo[0]) + len(q.fifo[1]) + len(q.fifo[2]) }

// Pop takes the oldest key of the lane next serves. The workqueue calls
// it only when Len > 0.
func (q *Queue) Pop() cache.ObjectName {
	l := q.next()
	key := q.fifo[l][0]
	q.fifo[l][0] = cache.ObjectName{}
	q.fifo[l] = q.fifo[l][1:]
	if len(q.fifo[l]) == 0 {
		// An empty slice of a lane keeps its whole array: after a
		// start's burst, one of every object's key.
		q.fifo[l] = nil
	}
	if l == laneUser {
		q.Marks.serving(key)
	}
	q.report(l)
	return key
}

// next is the lane Pop serves: the first lane that has a key, but
// another lane's key after FinalizeBurst finalize keys in a row, and a
// bulk key after userBurst user keys in a row.
func (q *Queue) next() int {
	others := len(q.fifo[laneUser]) + len(q.fifo[laneBulk])
	if len(q.fifo[laneFinalize]) > 0 && (others == 0 || q.urgents < FinalizeBurst) {
		if others > 0 {
			q.urgents++
		}
		return laneFinalize
	}
	q.urgents = 0
	switch {
	case len(q.fifo[laneUser]) == 0:
		q.burst = 0
		return laneBulk
	case len(q.fifo[laneBulk]) == 0:
		return laneUser
	case q.burst >= userBurst:
		q.burst = 0
		return laneBulk
	}
	q.burst++
	return laneUser
}

// Marks are the keys someone's change woke, until the queue places
// them in the user lane, and the keys served from the user lane, until
// their actions finish.
type Marks struct {
	mu      sync.Mutex
	keys    map[cache.ObjectName]struct{}
	current map[cache.ObjectName]struct{}
}

// serving records that key was taken from the user lane.
func (m *Marks) serving(key cache.ObjectName) {
	m.mu.Lock()
	if m.current == nil {
		m.current = map[cache.ObjectName]struct{}{}
	}
	m.current[key] = struct{}{}
	m.mu.Unlock()
}

// Finished is told that the action on key ended, and whether it is
// retried: the retry of a key served from the user lane goes back to it,
// so that a change someone made and whose action failed does not wait
// behind bulk work.
func (m *Marks) Finished(key cache.ObjectName, retried bool) {
	m.mu.Lock()
	if _, ok := m.current[key]; ok && retried {
		if m.keys == nil {
			m.keys = map[cache.ObjectName]struct{}{}
		}
		m.keys[key] = struct{}{}
	}
	delete(m.current, key)
	m.mu.Unlock()
}

// Mark marks key: someone changed its object.
func (m *Marks) Mark(key cache.ObjectName) {
	m.mu.Lock()
	if m.keys == nil {
		m.keys = map[cache.ObjectName]struct{}{}
	}
	m.keys[key] = struct{}{}
	m.mu.Unlock()
}

// take reports whether key was marked, and unmarks it.
func (m *Marks) take(key cache.ObjectName) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.keys[key]
	delete(m.keys, key)
	return ok
}
