package preview

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/reference"
)

// Recorder is the Event recorder of a preview: it sends each Event
// through Sink before Eventf returns. client-go's recorder sends them
// from goroutines of its own, with no way to wait for the last one: the
// report of a preview that ended could miss the Events of its last
// actions. Sink is the sink of the operator's broadcaster, on the same
// client, so an Event that would not pass through the dry run in a run
// does not pass in a preview either. Repeats are sent each time, where
// client-go would merge them into a series: each is a write all the same.
type Recorder struct {
	Sink   events.EventSink
	Scheme *runtime.Scheme
	// Controller is the reporting controller (the operator's name).
	Controller string
	Log        logr.Logger
}

var _ events.EventRecorder = Recorder{}

// Eventf sends the Event, as client-go's recorder makes it.
func (r Recorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	ev, err := r.event(regarding, related, eventtype, reason, action, fmt.Sprintf(note, args...))
	if err == nil {
		_, err = r.Sink.Create(context.Background(), ev)
	}
	if err != nil {
		r.Log.Error(err, "could not send an Event's dry run", "reason", reason)
	}
}

func (r Recorder) event(regarding, related runtime.Object, eventtype, reason, action, note string) (*eventsv1.Event, error) {
	ref, err := reference.GetReference(r.Scheme, regarding)
	if err != nil {
		return nil, err
	}
	var relatedRef *corev1.ObjectReference
	if related != nil {
		relatedRef, _ = reference.GetReference(r.Scheme, related)
	}
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	now := time.Now()
	host, _ := os.Hostname()
	return &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%v.%x", ref.Name, now.UnixNano()), Namespace: ns},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: r.Controller,
		ReportingInstance:   r.Controller + "-" + host,
		Action:              action,
		Reason:              reason,
		Regarding:           *ref,
		Related:             relatedRef,
		Note:                note,
		Type:                eventtype,
	}, nil
}
