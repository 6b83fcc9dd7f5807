package runtime

import (
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
	return func(e telemetry.Event) {
		switch e := e.(type) {
		case telemetry.WatchStarted:
			log.V(1).Info("watching", watchValues(e.Watch)...)
		case telemetry.WatchFailed:
			if apierrors.IsResourceExpired(e.Err) || apierrors.IsGone(e.Err) {
				// Routine: the server compacted the watch's resource version.
				log.V(1).Info("watch expired; listing again", append(watchValues(e.Watch), "reason", e.Err.Error())...)
				return
			}
			log.Error(e.Err, "watch failed; listing again after a backoff", watchValues(e.Watch)...)
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

func watchValues(w telemetry.Watch) []any {
	return []any{"controller", w.Controller, "kind", w.GVK.String(), "namespace", w.Namespace}
}
