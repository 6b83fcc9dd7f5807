package preview

import (
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Change is one write that would change what the API server stores.
type Change struct {
	// Verb is create, update, patch or delete.
	Verb string `json:"verb"`
	Target
	// APIVersion and Kind are the object's, as the server answered.
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	// Fields are the fields it would change: all of a new object's, none
	// of a deleted one's.
	Fields []Field `json:"fields,omitempty"`
}

// Event is an Event that would have been emitted.
type Event struct {
	Type, Reason, Note string
	// Regarding is the object it is about: "Kind namespace/name".
	Regarding string
}

func (e Event) String() string {
	return fmt.Sprintf("would emit Event %s %s on %s: %s", e.Type, e.Reason, e.Regarding, e.Note)
}

var verbs = map[string]string{
	http.MethodPost: "create", http.MethodPut: "update", http.MethodPatch: "patch", http.MethodDelete: "delete",
}

// record records the dry run of a write of method to t, which the server
// answered with after (decoded); live is the object before it (nil when
// none).
func (p *Preview) record(method string, t Target, live, after map[string]any) {
	if t.event() {
		if method == http.MethodPost {
			p.emitted(eventOf(after))
		}
		return // a series' count: the Event was recorded when created
	}
	c := Change{Verb: verbs[method], Target: t}
	if c.Verb == "" {
		c.Verb = method
	}
	switch {
	case method == http.MethodDelete && t.Name == "":
		// A collection's delete: the change names the collection, whose
		// kind the answer's list names.
		c.APIVersion, c.Kind = typeOf(after)
		c.Kind = strings.TrimSuffix(c.Kind, "List")
	case method == http.MethodDelete:
		if live == nil {
			return // nothing to delete
		}
		c.APIVersion, c.Kind = typeOf(live)
	case method == http.MethodPost && t.Name == "":
		// A create: the new object's name may come from generateName.
		c.Name, _ = nested(after, "metadata", "name").(string)
		c.APIVersion, c.Kind = typeOf(after)
		c.Fields = Diff(nil, after)
	case method == http.MethodPost:
		// A subresource's create (an eviction): what it names.
	case isStatus(after):
		// The write would end the object (the last finalizer of an
		// object being deleted): the change names it.
		c.APIVersion, c.Kind = typeOf(live)
	default:
		c.APIVersion, c.Kind = typeOf(after)
		if c.Fields = Diff(live, after); len(c.Fields) == 0 {
			return // an apply that changes nothing
		}
	}
	p.mu.Lock()
	p.changes = append(p.changes, c)
	p.mu.Unlock()
}

func (p *Preview) emitted(e Event) {
	p.mu.Lock()
	p.events = append(p.events, e)
	p.mu.Unlock()
}

// Failed records that an action failed: the preview cannot tell all it
// would have written.
func (p *Preview) Failed(what string, err error) {
	p.mu.Lock()
	p.failures = append(p.failures, what+": "+err.Error())
	p.mu.Unlock()
}

// eventOf reads an Event of events.k8s.io/v1 or of core v1.
func eventOf(obj map[string]any) Event {
	str := func(path ...string) string { s, _ := nested(obj, path...).(string); return s }
	e := Event{Type: str("type"), Reason: str("reason"), Note: str("note")}
	ref := "regarding"
	if _, ok := obj["involvedObject"]; ok { // core v1
		e.Note, ref = str("message"), "involvedObject"
	}
	e.Regarding = str(ref, "kind") + " " + str(ref, "name")
	if ns := str(ref, "namespace"); ns != "" {
		e.Regarding = str(ref, "kind") + " " + ns + "/" + str(ref, "name")
	}
	return e
}

func typeOf(obj map[string]any) (apiVersion, kind string) {
	apiVersion, _ = obj["apiVersion"].(string)
	kind, _ = obj["kind"].(string)
	return apiVersion, kind
}

// isStatus reports whether obj is a metav1.Status, the answer of a write
// that leaves no object.
func isStatus(obj map[string]any) bool {
	return obj["kind"] == "Status" && obj["apiVersion"] == "v1"
}

func nested(obj map[string]any, path ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, path...)
	return v
}
