// Package inflight tracks the keys an operator's handlers and Runnables
// work on, so that a shutdown that waits too long can name them, and the
// actions whose handlers are stuck past their timeout.
package inflight

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Set tracks the keys handlers and Runnables work on, to name the
// ones a shutdown leaves behind.
type Set struct {
	mu   sync.Mutex
	next uint64
	keys map[uint64]string
}

// Begin records that controller works on key until the returned function
// is called.
func (f *Set) Begin(controller, key string) (end func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.keys == nil {
		f.keys = map[uint64]string{}
	}
	f.next++
	id := f.next
	f.keys[id] = controller + " " + key
	return func() {
		f.mu.Lock()
		delete(f.keys, id)
		f.mu.Unlock()
	}
}

// List returns "controller key" of everything in flight, sorted.
func (f *Set) List() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.keys))
	for _, k := range f.keys {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Stuck tracks the actions whose handlers still run a grace period
// after their timeout: they ignore their cancelled context, and their
// workers wait for them.
type Stuck struct {
	mu sync.Mutex
	by map[*Action]struct{}
	// Gauge, when set, counts them by controller.
	Gauge *prometheus.GaugeVec
}

// Action is one action that may get stuck.
type Action struct {
	s                *Stuck
	controller, key  string
	since            time.Time
	marked, finished bool
}

// Action returns the action of controller on key, not stuck yet.
func (s *Stuck) Action(controller, key string) *Action {
	return &Action{s: s, controller: controller, key: key}
}

// Mark records that the action is stuck, unless it has finished.
func (a *Action) Mark() {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	if a.finished || a.marked {
		return
	}
	a.marked, a.since = true, time.Now()
	if a.s.by == nil {
		a.s.by = map[*Action]struct{}{}
	}
	a.s.by[a] = struct{}{}
	if a.s.Gauge != nil {
		a.s.Gauge.WithLabelValues(a.controller).Inc()
	}
}

// Finish records that the action's handler returned.
func (a *Action) Finish() {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	a.finished = true
	if !a.marked {
		return
	}
	delete(a.s.by, a)
	if a.s.Gauge != nil {
		a.s.Gauge.WithLabelValues(a.controller).Dec()
	}
}

// Err says which actions are stuck and since when, or is nil.
func (s *Stuck) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.by) == 0 {
		return nil
	}
	all := make([]string, 0, len(s.by))
	for a := range s.by {
		all = append(all, fmt.Sprintf("%s %s for %s", a.controller, a.key, time.Since(a.since).Round(time.Second)))
	}
	slices.Sort(all)
	return fmt.Errorf("%d handler(s) stuck past their action timeout, their context cancelled: %s", len(all), strings.Join(all, ", "))
}
