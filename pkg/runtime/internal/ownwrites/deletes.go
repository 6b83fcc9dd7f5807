package ownwrites

import (
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
	owners map[types.UID]struct{}
}

// Mark records that owner's owned objects changed.
func (c *Changes) Mark(owner types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.owners == nil {
		c.owners = map[types.UID]struct{}{}
	}
	c.owners[owner] = struct{}{}
}

// Take reports whether owner's owned objects changed since the last Take, and
// forgets it.
func (c *Changes) Take(owner types.UID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.owners[owner]
	delete(c.owners, owner)
	return ok
}
