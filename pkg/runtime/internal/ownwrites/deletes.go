package ownwrites

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Deletes are the objects the operator deleted, by UID, until the cache
// shows their deletion. Reads hide them meanwhile: an action that deleted
// an owned object and lists the owned objects again does not find it, and neither
// does the action after it. Their watch events wake nobody.
type Deletes struct{ uids sync.Map } // types.UID → struct{}

// Begin records a delete of uid before it is sent: the watch may tell of
// it before the call returns.
func (d *Deletes) Begin(uid types.UID) { d.uids.Store(uid, struct{}{}) }

// Failed forgets uid: the delete did not happen.
func (d *Deletes) Failed(uid types.UID) { d.uids.Delete(uid) }

// Hidden reports whether reads hide the object uid.
func (d *Deletes) Hidden(uid types.UID) bool {
	_, ok := d.uids.Load(uid)
	return ok
}

// Gone takes the cache's deletion of uid and reports whether it was the
// operator's own.
func (d *Deletes) Gone(uid types.UID) (own bool) {
	_, own = d.uids.LoadAndDelete(uid)
	return own
}

// Changes are the owners whose action created or deleted one of their
// owned objects with a write of its own (plug.CreateNow, ApplyNow, DeleteNow),
// until the action ends: the runtime then handles them once more, since
// what the action computed from its owned objects may predate its writes.
type Changes struct {
	mu     sync.Mutex
	owners map[types.UID][]string
}

// changesKept bounds the changes kept for one owner's action.
const changesKept = 8

// Mark records that owner's owned objects changed: what says how (an
// object created or deleted).
func (c *Changes) Mark(owner types.UID, what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.owners == nil {
		c.owners = map[types.UID][]string{}
	}
	if whats := c.owners[owner]; len(whats) < changesKept && !slices.Contains(whats, what) {
		c.owners[owner] = append(whats, what)
	}
}

// Take returns how owner's owned objects changed since the last Take (nil
// when they did not), and forgets it.
func (c *Changes) Take(owner types.UID) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	whats := c.owners[owner]
	delete(c.owners, owner)
	return whats
}
