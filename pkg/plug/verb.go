package plug

// Verb says why an action runs. The runtime picks it from the object's state,
// not from the watch event that woke it up; see pkg/runtime.
type Verb string

const (
	// Add: the controller has not handled this object yet.
	Add Verb = "Add"
	// Modify: the object's generation changed since it was last handled.
	Modify Verb = "Modify"
	// Delete: the object is being deleted and still carries the
	// controller's finalizer.
	Delete Verb = "Delete"
	// Reconcile: nothing the controller handled changed; the action comes
	// from the periodic timer, a requeue, a change to an owned or watched
	// object, or a restart.
	Reconcile Verb = "Reconcile"
)
