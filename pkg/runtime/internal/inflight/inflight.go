// Package inflight tracks the keys an operator's handlers and Runnables
// work on, so that a shutdown that waits too long can name them.
package inflight

import (
	"slices"
	"sync"
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
