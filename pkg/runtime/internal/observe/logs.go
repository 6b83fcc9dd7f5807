package observe

import (
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// NewBus returns an operator's telemetry bus with its metrics and logs
// subscribed.
func NewBus(m *Metrics, log logr.Logger) *telemetry.Bus {
	b := &telemetry.Bus{OnPanic: func(e telemetry.Event, r any) {
		log.Error(nil, "a telemetry subscriber panicked; the event was dropped for it", "event", e.Name(), "panic", r)
	}}
	telemetry.On(b, m.Handle)
	telemetry.On(b, logEvent(log))
	telemetry.On(b, watchMetrics(m))
	telemetry.On(b, logLifecycle(log))
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
		case telemetry.ReconcileTimedOut:
			logTimeout(log, e)
		case telemetry.HotLoop:
			log.Info("hot loop: handled again and again with nothing but the operator's own writes to wake it; backing off until something else changes",
				"controller", e.Controller, "namespace", e.Key.Namespace, "name", e.Key.Name, "actions", e.Actions, "within", e.Within, "flipping", e.Fields)
		case telemetry.ReconcilePaused:
			log.V(1).Info("paused by annotation", "controller", e.Controller, "namespace", e.Key.Namespace, "name", e.Key.Name)
		case telemetry.BindSucceeded:
			log.V(1).Info("bound", "scheduler", e.Scheduler, "namespace", e.Pod.Namespace, "pod", e.Pod.Name, "node", e.Node)
		case telemetry.BindFailed:
			log.Info("could not schedule", "scheduler", e.Scheduler, "namespace", e.Pod.Namespace, "pod", e.Pod.Name, "unschedulable", e.Unschedulable, "reason", e.Err.Error())
		case telemetry.TaskRan:
			if e.Err != nil {
				log.Error(e.Err, "task failed", "task", e.Task)
			}
		case telemetry.TaskStopped:
			if e.Err != nil {
				log.Error(e.Err, "task halted on its error", "task", e.Task)
				return
			}
			log.Info("task stopped", "task", e.Task, "reason", e.Reason)
		case telemetry.ShardMoved:
			log.V(2).Info("shard move", "bucket", e.Bucket, "verb", e.Verb, "from", e.From, "to", e.To)
		}
	}
}

// logTimeout logs an action past its deadline, and once more when its
// handler ignores the cancelled context.
func logTimeout(log logr.Logger, e telemetry.ReconcileTimedOut) {
	kv := []any{"controller", e.Controller, "namespace", e.Key.Namespace, "name", e.Key.Name, "verb", e.Verb, "reconcileID", e.ID, "timeout", e.Timeout}
	if e.Stuck {
		log.Error(nil, "the handler ignores its cancelled context: its worker waits for it, and no other action on the object starts meanwhile", kv...)
		return
	}
	log.Info("the action ran past its timeout; its context is cancelled and it is retried", kv...)
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
		log.Error(e.Err, "the API server does not serve this kind: install its CRD (make install, or kubectl apply -f config/crd/, or -k config/crd/ once opgen manifests --format kustomize wrote a kustomization.yaml there); retrying with a backoff", kv...)
		return
	}
	log.Error(e.Err, "watch failed (the API server may be unreachable); listing again with a backoff of up to 30s", kv...)
}

func watchValues(w telemetry.Watch) []any {
	return []any{"controller", w.Controller, "kind", w.GVK.String(), "namespace", w.Namespace}
}

// watchMetrics counts the watches' lifecycle events by controller, kind
// and event name (watch.opened, watch.timedout, ...): a watch that keeps
// reopening without timing out shows here first.
func watchMetrics(m *Metrics) func(telemetry.Event) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "opgen_watch_events_total", Help: "Watch lifecycle events (opened, chunk received, finished, timed out, failed, stopped), by controller, kind and event.",
	}, []string{"controller", "kind", "event"})
	m.Registry.MustRegister(c)
	return func(e telemetry.Event) {
		if w, ok := watchOf(e); ok {
			c.WithLabelValues(w.Controller, w.GVK.Kind, e.Name()).Inc()
		}
	}
}

func watchOf(e telemetry.Event) (telemetry.Watch, bool) {
	switch e := e.(type) {
	case telemetry.WatchOpened:
		return e.Watch, true
	case telemetry.WatchChunkReceived:
		return e.Watch, true
	case telemetry.WatchFinished:
		return e.Watch, true
	case telemetry.WatchTimedOut:
		return e.Watch, true
	case telemetry.WatchFailed:
		return e.Watch, true
	case telemetry.WatchStopped:
		return e.Watch, true
	}
	return telemetry.Watch{}, false
}

// logLifecycle logs the lifecycle events of watches, controllers and
// schedulers: routine ones at V(1) or V(2), failures as errors.
func logLifecycle(log logr.Logger) func(telemetry.Event) {
	return func(e telemetry.Event) {
		switch e := e.(type) {
		case telemetry.WatchOpened, telemetry.WatchChunkReceived, telemetry.WatchTimedOut:
			if w, ok := watchOf(e); ok {
				log.V(2).Info(e.Name(), watchValues(w)...)
			}
		case telemetry.WatchFinished:
			log.V(1).Info("the server ended a watch early; watching again", append(watchValues(e.Watch), "after", e.Duration)...)
		case telemetry.WatchStopped:
			log.V(1).Info("watch stopped", watchValues(e.Watch)...)
		case telemetry.ControllerStarted:
			log.V(1).Info("workers started", "controller", e.Controller, "workers", e.Count)
		case telemetry.ControllerStopped:
			log.V(1).Info("workers stopped", "controller", e.Controller)
		case telemetry.SchedulerFetchFailed:
			log.Error(e.Err, "scheduler could not read its "+e.Resource+"; retrying after a backoff", "scheduler", e.Scheduler)
		case telemetry.TaskRegistered:
			log.V(1).Info("task registered", "task", e.Task, "every", e.Every)
		}
	}
}
