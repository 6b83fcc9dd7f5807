package runtime

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/lanes"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// ReasonHotLoop is the reason of the Warning Event on an object handled
// again and again with nothing but the operator's own writes to wake it.
const ReasonHotLoop = "HotLoop"

// HotLoopOptions say when an object is in a hot loop: handled Actions
// times in a row within Within, each woken by nothing but the operator's
// own writes seen back (telemetry.TriggerEcho). Its handler undoes or
// redoes what it wrote the time before, or writes what it did not read
// back. The runtime records one Warning Event (ReasonHotLoop) on the
// object, logs the fields that flipped between the writes, counts it in
// opgen_hot_loops_total, and backs the object off as it does after
// errors until something else wakes it.
type HotLoopOptions struct {
	// Actions in a row that make a hot loop. Default
	// DefaultHotLoopActions; negative: never a hot loop.
	Actions int
	// Within is the time those actions fall in. Default
	// DefaultHotLoopWithin.
	Within time.Duration
}

// The defaults of HotLoopOptions: a handler that converges writes once
// and sees no echo of it (the runtime tells its own writes apart), so ten
// echoes in a row within a minute are no handler at work but a loop.
const (
	DefaultHotLoopActions = 10
	DefaultHotLoopWithin  = time.Minute
)

func (h HotLoopOptions) complete() HotLoopOptions {
	h.Actions = orDefault(h.Actions, DefaultHotLoopActions)
	h.Within = orDefault(h.Within, DefaultHotLoopWithin)
	return h
}

// hotLoops catch a controller's objects in hot loops.
type hotLoops struct {
	opts     HotLoopOptions
	gvk      schema.GroupVersionKind
	clock    clock.PassiveClock
	queue    *lanes.Keys
	recorder events.EventRecorder
	bus      *telemetry.Bus
}

// loopState is what hotLoops keep of one object: the echo-only actions
// in a row, since when, whether it is in a hot loop, and whether its
// next action waited for its backoff.
type loopState struct {
	echoes int
	since  time.Time
	hot    bool
	waited bool
}

// hotLoopSeen is told the triggers ts of the action r on obj before it
// runs, and reports whether to hold the action back. A trigger other
// than an echo ends a hot loop (the key's backoff is forgotten when the
// action succeeds); the Actions-th echo-only action within Within starts
// one, reported once. In a hot loop, each action that echoes alone woke
// first waits for the key's backoff, which grows, as after errors.
func hotLoopSeen[T apis.Object](h *hotLoops, key cache.ObjectName, obj T, st *loopState, r telemetry.Reconcile, ts telemetry.Triggers) (hold bool) {
	if h.opts.Actions < 0 {
		return false
	}
	if !ts.OnlyEchoes() {
		*st = loopState{}
		return false
	}
	if st.hot {
		if st.waited {
			st.waited = false
			return false
		}
		st.waited = true
		h.queue.Note(key, ts)
		h.queue.AddRateLimited(key)
		return true
	}
	now := h.clock.Now()
	if st.echoes == 0 || now.Sub(st.since) > h.opts.Within {
		st.echoes, st.since = 0, now
	}
	st.echoes++
	if st.echoes < h.opts.Actions {
		return false
	}
	st.hot = true
	fields := ts.Fields()
	h.bus.Emit(telemetry.HotLoop{Reconcile: r, Actions: st.echoes, Within: now.Sub(st.since), Fields: fields})
	ref := obj.DeepCopyObject().(T)
	if ref.GetObjectKind().GroupVersionKind().Kind == "" {
		ref.GetObjectKind().SetGroupVersionKind(h.gvk)
	}
	h.recorder.Eventf(ref, nil, corev1.EventTypeWarning, ReasonHotLoop, "HotLoop",
		"handled %d times in %s with nothing but the operator's own writes to wake it; between them %s changed; backing off until something else changes",
		st.echoes, now.Sub(st.since).Round(time.Millisecond), orNone(fields))
	return false
}

func orNone(fields []string) string {
	if len(fields) == 0 {
		return "no field it could name"
	}
	return strings.Join(fields, ", ")
}
