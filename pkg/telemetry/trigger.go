package telemetry

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// TriggerKind is what woke an action: the label of
// opgen_reconcile_triggers_total.
type TriggerKind string

// The kinds of trigger. The queue merges the triggers of the wakes of one
// key until a worker takes it, so that an action carries them all.
const (
	// TriggerChange: someone created, changed or deleted the object.
	TriggerChange TriggerKind = "change"
	// TriggerStart: the initial list after a start (or after leadership
	// or a bucket was taken) found the object.
	TriggerStart TriggerKind = "start"
	// TriggerOwned: someone changed, created or deleted an object the
	// controller owns (Trigger.Object names it).
	TriggerOwned TriggerKind = "owned"
	// TriggerWatched: a watched object changed and the Watch's Map named
	// the key (Trigger.Object names it).
	TriggerWatched TriggerKind = "watched"
	// TriggerPeriodic: the controller's ReconcileEvery came round.
	TriggerPeriodic TriggerKind = "periodic"
	// TriggerRequeue: the handler asked to run again (RequeueAfter).
	TriggerRequeue TriggerKind = "requeue"
	// TriggerRetry: the last action failed (or could not add the
	// finalizer) and this is its retry, after the key's backoff.
	TriggerRetry TriggerKind = "retry"
	// TriggerWake: code asked for an action (Controller.Enqueue), as a
	// webhook, a test or a manual wake does.
	TriggerWake TriggerKind = "wake"
	// TriggerEcho: a write of the operator's own came back: a change to
	// the object, or to one it owns, that only the operator's field
	// manager made, or owned objects the last action created or deleted
	// with a write of its own (CreateNow, ApplyNow, DeleteNow).
	// Trigger.Fields names what the write changed.
	TriggerEcho TriggerKind = "echo"
)

// TriggerKinds are the kinds of trigger, in the order the queue keeps
// them.
var TriggerKinds = []TriggerKind{TriggerChange, TriggerStart, TriggerOwned, TriggerWatched,
	TriggerPeriodic, TriggerRequeue, TriggerRetry, TriggerWake, TriggerEcho}

// Trigger is one cause of an action.
type Trigger struct {
	Kind TriggerKind
	// Object names the changed object as "Kind namespace/name" when it is
	// not the action's own (owned and watched objects); empty otherwise.
	Object string
	// Generation and ResourceVersion are the changed object's after the
	// change; zero when the trigger is no change (a tick, a retry).
	Generation      int64
	ResourceVersion string
	// Fields are the fields an echo's write changed, as paths such as
	// "spec.replicas" or "metadata.annotations.example.com/flip".
	Fields []string
}

// String is the trigger as logs show it: kind(object gen rv fields).
func (t Trigger) String() string {
	var parts []string
	if t.Object != "" {
		parts = append(parts, t.Object)
	}
	if t.Generation != 0 {
		parts = append(parts, "gen "+strconv.FormatInt(t.Generation, 10))
	}
	if t.ResourceVersion != "" {
		parts = append(parts, "rv "+t.ResourceVersion)
	}
	if len(t.Fields) > 0 {
		parts = append(parts, "fields "+strings.Join(t.Fields, ","))
	}
	if len(parts) == 0 {
		return string(t.Kind)
	}
	return string(t.Kind) + "(" + strings.Join(parts, " ") + ")"
}

// Triggers are the causes of one action, one per kind and object, the
// latest of each.
type Triggers []Trigger

// String lists the triggers as logs show them.
func (ts Triggers) String() string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}

// MarshalLog is the triggers as a structured logger writes them (logr's
// Marshaler): the String form, formatted only when the line is written.
func (ts Triggers) MarshalLog() any { return ts.String() }

// Kinds returns the distinct kinds of the triggers.
func (ts Triggers) Kinds() []TriggerKind {
	var out []TriggerKind
	for _, t := range ts {
		if !slices.Contains(out, t.Kind) {
			out = append(out, t.Kind)
		}
	}
	return out
}

// OnlyEchoes reports whether the operator's own writes are all that woke
// the action (and something did).
func (ts Triggers) OnlyEchoes() bool {
	for _, t := range ts {
		if t.Kind != TriggerEcho {
			return false
		}
	}
	return len(ts) > 0
}

// Fields returns the fields the echoes among ts name, each once, sorted.
func (ts Triggers) Fields() []string {
	var out []string
	for _, t := range ts {
		if t.Kind == TriggerEcho {
			out = append(out, t.Fields...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ReconcileWoken: what woke an action, just before its ReconcileStarted.
// Triggers are the causes its queue merged for the key since the key's
// last action began.
type ReconcileWoken struct {
	Reconcile
	Triggers Triggers
}

func (ReconcileWoken) Name() string { return "reconcile.woken" }
func (ReconcileWoken) event()       {}

var _ Event = ReconcileWoken{}

// HotLoop: an object was handled Actions times within Within with nothing
// but the operator's own writes to wake it. Its handler undoes or redoes
// what it wrote the time before: Fields name what flipped between the
// writes. The runtime records a Warning Event on the object, counts it in
// opgen_hot_loops_total, and backs the object off as it does after
// errors, until something else wakes it.
type HotLoop struct {
	Reconcile
	Actions int
	Within  time.Duration
	Fields  []string
}

func (HotLoop) Name() string { return "reconcile.hotloop" }
func (HotLoop) event()       {}

var _ Event = HotLoop{}
