package runtime

import (
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// maxEventNote is the API server's limit on an Event's note, in bytes: a
// longer note makes it reject the Event, which is then lost.
const maxEventNote = 1024

// noteLimit is the operator's Event recorder as Operator.Recorder gives it
// to handlers: it cuts each note to the server's limit, as the pipeline's
// RecordEvents step does for the events an action records.
type noteLimit struct{ events.EventRecorder }

var _ events.EventRecorder = noteLimit{}

// Eventf formats the note and records it cut to maxEventNote bytes.
func (r noteLimit) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if len(args) > 0 {
		note = fmt.Sprintf(note, args...)
	}
	r.EventRecorder.Eventf(regarding, related, eventtype, reason, action, "%s", cutNote(note))
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
