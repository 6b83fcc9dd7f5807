package lanes

import (
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// maxTriggers bounds the triggers kept for one key: one per kind and
// object, the latest of each. A key woken by more owned objects than that
// between two actions keeps the first maxTriggers.
const maxTriggers = 8

// triggers are the causes of the keys' next actions: what woke each key
// since a worker last took it, and the delayed wakes (periodic ticks,
// requeues) that count from when they are due.
type triggers struct {
	mu    sync.Mutex
	now   map[cache.ObjectName]telemetry.Triggers
	later map[cache.ObjectName][]delayed
	peak  int // the largest len(now) since now was last made
	// updates are the changes whose kind is settled when a worker takes
	// their key (Config.Settle): whether a change is an echo of the
	// operator's own write is known for sure only once the write's answer
	// was read, and its watch event may come first.
	updates map[cache.ObjectName][]Update
	settle  func(Update) telemetry.Trigger
}

// Update is a change to settle: the trigger as the event saw it, the
// resource versions of the events merged into it, and the object before
// the first and after the last.
type Update struct {
	Trigger  telemetry.Trigger
	Versions []string
	Old, New any
}

// maxVersions bounds Update.Versions: past it, a change is not an echo.
const maxVersions = 16

type delayed struct {
	at time.Time
	t  telemetry.Trigger
}

// note merges t into key's triggers: it replaces the trigger of the same
// kind and object, with the union of the fields of two echoes.
func (tr *triggers) note(key cache.ObjectName, t telemetry.Trigger) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.now == nil {
		tr.now = map[cache.ObjectName]telemetry.Triggers{}
	}
	tr.now[key] = merge(tr.now[key], t)
	tr.peak = max(tr.peak, len(tr.now))
}

func merge(ts telemetry.Triggers, t telemetry.Trigger) telemetry.Triggers {
	i := slices.IndexFunc(ts, func(o telemetry.Trigger) bool { return o.Kind == t.Kind && o.Object == t.Object })
	switch {
	case i >= 0 && t.Kind == telemetry.TriggerEcho:
		fields := append(slices.Clone(ts[i].Fields), t.Fields...)
		slices.Sort(fields)
		t.Fields = slices.Compact(fields)
		ts[i] = t
	case i >= 0:
		ts[i] = t
	case len(ts) < maxTriggers:
		ts = append(ts, t)
	}
	return ts
}

// noteUpdate records a change of key, to be settled when a worker takes
// it. Changes of the same kind and object merge: the first's old object,
// the last's new one.
func (tr *triggers) noteUpdate(key cache.ObjectName, u Update) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.updates == nil {
		tr.updates = map[cache.ObjectName][]Update{}
	}
	us := tr.updates[key]
	i := slices.IndexFunc(us, func(o Update) bool { return o.Trigger.Kind == u.Trigger.Kind && o.Trigger.Object == u.Trigger.Object })
	switch {
	case i < 0 && len(us) < maxTriggers:
		tr.updates[key] = append(us, u)
	case i >= 0:
		o := &us[i]
		o.Trigger, o.New = u.Trigger, u.New
		if len(o.Versions) < maxVersions {
			o.Versions = append(o.Versions, u.Versions...)
		} else {
			o.Versions = append(o.Versions, "") // no resource version: not the operator's
		}
	}
}

// noteAt records t for key when at comes.
func (tr *triggers) noteAt(key cache.ObjectName, at time.Time, t telemetry.Trigger) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.later == nil {
		tr.later = map[cache.ObjectName][]delayed{}
	}
	tr.later[key] = append(tr.later[key], delayed{at: at, t: t})
}

// take returns key's triggers, those due by now included, and forgets
// them. A delayed trigger that is not due yet stays: its wake is still
// ahead, and the action it wakes will carry it.
func (tr *triggers) take(key cache.ObjectName, now time.Time) telemetry.Triggers {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	ts := tr.now[key]
	delete(tr.now, key)
	for _, u := range tr.updates[key] {
		t := u.Trigger
		if tr.settle != nil {
			t = tr.settle(u)
		}
		ts = merge(ts, t)
	}
	delete(tr.updates, key)
	if len(tr.now) == 0 && tr.peak > 64 {
		// A map keeps its buckets once grown: after a start's burst, one
		// for every object.
		tr.now, tr.peak = nil, 0
	}
	if ds, ok := tr.later[key]; ok {
		kept := ds[:0]
		for _, d := range ds {
			if d.at.After(now) {
				kept = append(kept, d)
				continue
			}
			ts = merge(ts, d.t)
		}
		if len(kept) == 0 {
			delete(tr.later, key)
		} else {
			tr.later[key] = kept
		}
	}
	return ts
}

// forget drops what is kept for key: its object is gone.
func (tr *triggers) forget(key cache.ObjectName) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	delete(tr.now, key)
	delete(tr.later, key)
	delete(tr.updates, key)
}
