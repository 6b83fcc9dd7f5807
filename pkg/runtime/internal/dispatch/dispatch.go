// Package dispatch is what the controllers of one kind's versions share
// under a version dispatch (runtime.ControllerOptions.VersionDispatch):
// the turns on keys, so that two versions never handle an object at once,
// and who handled each key last.
package dispatch

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// Groups are an operator's dispatch groups, by kind, each under a rule R.
type Groups[R any] struct {
	mu     sync.Mutex
	groups map[schema.GroupKind]*Group[R]
}

// Group is what the controllers of one kind under one rule share.
type Group[R any] struct {
	rule R

	mu    sync.Mutex
	turns map[cache.ObjectName]*turn
	last  map[cache.ObjectName]HandledBy
	by    map[string]bool // versions registered
}

type turn struct {
	sync.Mutex
	waiting int // holders and waiters, under Group.mu
}

// HandledBy is who handled a key last: the object's UID and the version
// of the controller.
type HandledBy struct {
	UID     types.UID
	Version string
}

// Join adds a controller of gvk under rule to the group of its kind,
// creating it; same tells whether two rules are the same, and every
// version's controller must bring the same rule.
func (d *Groups[R]) Join(gvk schema.GroupVersionKind, rule R, same func(a, b R) bool) (*Group[R], error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.groups == nil {
		d.groups = map[schema.GroupKind]*Group[R]{}
	}
	g := d.groups[gvk.GroupKind()]
	switch {
	case g == nil:
		g = &Group[R]{rule: rule, turns: map[cache.ObjectName]*turn{}, last: map[cache.ObjectName]HandledBy{}, by: map[string]bool{}}
		d.groups[gvk.GroupKind()] = g
	case !same(g.rule, rule):
		return nil, fmt.Errorf("runtime.Register: %s %s: ControllerOptions.VersionDispatch %+v differs from %+v, which another version's controller registered; give every version's controller the same", gvk.GroupKind(), gvk.Version, rule, g.rule)
	case g.by[gvk.Version]:
		return nil, fmt.Errorf("runtime.Register: %s %s: a controller of this version already shares the kind (ControllerOptions.VersionDispatch); one controller per version", gvk.GroupKind(), gvk.Version)
	}
	g.by[gvk.Version] = true
	return g, nil
}

// Take waits for key's turn; release gives it back.
func (g *Group[R]) Take(key cache.ObjectName) (release func()) {
	g.mu.Lock()
	t := g.turns[key]
	if t == nil {
		t = &turn{}
		g.turns[key] = t
	}
	t.waiting++
	g.mu.Unlock()
	t.Lock()
	return func() {
		t.Unlock()
		g.mu.Lock()
		if t.waiting--; t.waiting == 0 {
			delete(g.turns, key)
		}
		g.mu.Unlock()
	}
}

// Last is who handled key last, zero when unknown.
func (g *Group[R]) Last(key cache.ObjectName) HandledBy {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.last[key]
}

// Handled records who handled key.
func (g *Group[R]) Handled(key cache.ObjectName, by HandledBy) {
	g.mu.Lock()
	g.last[key] = by
	g.mu.Unlock()
}

// Forget drops what Handled recorded of key.
func (g *Group[R]) Forget(key cache.ObjectName) {
	g.mu.Lock()
	delete(g.last, key)
	g.mu.Unlock()
}
