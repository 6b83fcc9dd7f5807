package observe

import (
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
)

// maxEventNote is the API server's limit on an Event's note, in bytes: a
// longer note makes it reject the Event, which is then lost.
const maxEventNote = 1024

// NoteLimit is the operator's Event recorder as Operator.Recorder gives it
// to handlers. It cuts each note to the server's limit, as the pipeline's
// RecordEvents step does for the events an action records. And it names
// the object an Event is about without its resource version: client-go
// merges repeats of an Event into one series only when they regard the
// same reference, and a failing object whose status changes between
// tries has a new version each time.
type NoteLimit struct{ events.EventRecorder }

var _ events.EventRecorder = NoteLimit{}

// Eventf formats the note and records it cut to maxEventNote bytes.
func (r NoteLimit) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if len(args) > 0 {
		note = fmt.Sprintf(note, args...)
	}
	r.EventRecorder.Eventf(unversioned(regarding), related, eventtype, reason, action, "%s", cutNote(note))
}

// unversioned returns obj's identity without its resource version, with
// its kind from its TypeMeta or client-go's scheme; obj itself when
// neither knows it.
func unversioned(obj runtime.Object) runtime.Object {
	m, err := meta.Accessor(obj)
	if err != nil || m.GetResourceVersion() == "" {
		return obj
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" {
		gvks, _, err := scheme.Scheme.ObjectKinds(obj)
		if err != nil || len(gvks) == 0 {
			return obj
		}
		gvk = gvks[0]
	}
	ref := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID()}}
	ref.SetGroupVersionKind(gvk)
	return ref
}

// cutNote cuts note to maxEventNote bytes on a rune boundary, ending it
// with "..." when cut.
func cutNote(note string) string {
	if len(note) <= maxEventNote {
		return note
	}
	cut := maxEventNote - len("...")
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + "..."
}
