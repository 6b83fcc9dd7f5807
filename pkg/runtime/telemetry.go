package runtime

import (
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Telemetry returns the operator's event bus: subscribe to it for every
// watch, reconcile, scheduler, task and leadership event (see package
// telemetry). The operator's metrics and logs are subscribers of it.
func (o *Operator) Telemetry() *telemetry.Bus { return o.bus }

func (o *Operator) emit(e telemetry.Event) { o.bus.Emit(e) }

// newBus returns a bus with the operator's metrics and logs subscribed.
func newBus(m *metrics, log logr.Logger) *telemetry.Bus {
	b := &telemetry.Bus{OnPanic: func(e telemetry.Event, r any) {
		log.Error(nil, "a telemetry subscriber panicked; the event was dropped for it", "event", e.Name(), "panic", r)
	}}
	b.Subscribe(telemetry.HandlerFunc(m.handle))
	b.Subscribe(telemetry.HandlerFunc(logEvent(log)))
	return b
}

// logEvent logs what no other part logs already: actions are logged by the
// plug.Logger step with the action's own logger, leadership by the
// elector.
func logEvent(log logr.Logger) func(telemetry.Event) {
	limit := &watchLogLimiter{last: map[telemetry.Watch]watchLogState{}}
	return func(e telemetry.Event) {
		switch e := e.(type) {
		case telemetry.WatchStarted:
			limit.reset(e.Watch)
			log.V(1).Info("watching", watchValues(e.Watch)...)
		case telemetry.WatchFailed:
			if apierrors.IsResourceExpired(e.Err) || apierrors.IsGone(e.Err) {
				// Routine: the server compacted the watch's resource version.
				log.Info("watch expired; listing again", append(watchValues(e.Watch), "reason", e.Err.Error())...)
				return
			}
			logWatchFailed(log, limit, e)
		case telemetry.WatchRelisted:
			log.V(1).Info("listed again", watchValues(e.Watch)...)
		case telemetry.ReconcilePaused:
			log.V(1).Info("paused by annotation", "controller", e.Controller, "namespace", e.Key.Namespace, "name", e.Key.Name)
		case telemetry.BindSucceeded:
			log.V(1).Info("bound", "scheduler", e.Scheduler, "namespace", e.Pod.Namespace, "pod", e.Pod.Name, "node", e.Node)
		case telemetry.BindFailed:
			log.Info("could not schedule", "scheduler", e.Scheduler, "namespace", e.Pod.Namespace, "pod", e.Pod.Name, "unschedulable", e.Unschedulable, "reason", e.Err.Error())
		case telemetry.TaskRan:
			if e.Err != nil {
				log.Error(e.Err, "task failed; retrying after a backoff", "task", e.Task)
			}
		case telemetry.TaskStopped:
			log.Info("task stopped", "task", e.Task, "reason", e.Reason)
		}
	}
}

// watchFailedEvery bounds how often one watch's failures are logged: a
// reflector retries every second or so during an outage.
const watchFailedEvery = 30 * time.Second

type watchLogState struct {
	at         time.Time
	suppressed int
}

// watchLogLimiter lets one message per watch through every
// watchFailedEvery and counts the others.
type watchLogLimiter struct {
	mu   sync.Mutex
	last map[telemetry.Watch]watchLogState
}

// allow reports whether to log a failure of w now, and how many were
// suppressed since the last one logged.
func (l *watchLogLimiter) allow(w telemetry.Watch) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st, seen := l.last[w]
	if seen && time.Since(st.at) < watchFailedEvery {
		st.suppressed++
		l.last[w] = st
		return false, 0
	}
	l.last[w] = watchLogState{at: time.Now()}
	return true, st.suppressed
}

func (l *watchLogLimiter) reset(w telemetry.Watch) {
	l.mu.Lock()
	delete(l.last, w)
	l.mu.Unlock()
}

func logWatchFailed(log logr.Logger, limit *watchLogLimiter, e telemetry.WatchFailed) {
	ok, suppressed := limit.allow(e.Watch)
	if !ok {
		return
	}
	kv := append(watchValues(e.Watch), "suppressed", suppressed, "nextLogIn", watchFailedEvery)
	if apierrors.IsNotFound(e.Err) {
		log.Error(e.Err, "the API server does not serve this kind: install its CRD (make install, or kubectl apply -f config/crd/); retrying with a backoff", kv...)
		return
	}
	log.Error(e.Err, "watch failed (the API server may be unreachable); listing again with a backoff of up to 30s", kv...)
}

func watchValues(w telemetry.Watch) []any {
	return []any{"controller", w.Controller, "kind", w.GVK.String(), "namespace", w.Namespace}
}
