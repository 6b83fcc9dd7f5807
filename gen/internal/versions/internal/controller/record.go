package controller

import (
	"fmt"
	"sync"

	"github.com/opgen-sdk/opgen/pkg/plug"
)

// Handled is one action a controller ran.
type Handled struct {
	Version, Name string
	Verb          plug.Verb
	Generation    int64
}

// Record keeps the actions of both controllers, and what would have been
// an object handled by both at once.
type Record struct {
	mu       sync.Mutex
	list     []Handled
	inside   map[string]string
	overlaps []string
}

// Actions is the record of this process's controllers.
var Actions = &Record{inside: map[string]string{}}

// enter records an action; the returned func ends it.
func (r *Record) enter(h Handled) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if other, ok := r.inside[h.Name]; ok {
		r.overlaps = append(r.overlaps, fmt.Sprintf("%s handled in %s while %s handled it", h.Name, h.Version, other))
	}
	r.inside[h.Name] = h.Version
	r.list = append(r.list, h)
	return func() {
		r.mu.Lock()
		delete(r.inside, h.Name)
		r.mu.Unlock()
	}
}

// Of returns the actions of version's controller on name.
func (r *Record) Of(version, name string) []Handled {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Handled
	for _, h := range r.list {
		if h.Version == version && h.Name == name {
			out = append(out, h)
		}
	}
	return out
}

// Overlaps returns the objects handled by both controllers at once.
func (r *Record) Overlaps() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.overlaps...)
}
