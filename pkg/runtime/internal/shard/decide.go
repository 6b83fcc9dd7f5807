package shard

// Object is what the sharder knows of one object: its key and its shard
// labels.
type Object struct {
	// Key is namespace/name (name for cluster-scoped kinds).
	Key string
	// Owner is the value of the shard label: the member that handles it,
	// or "" when unassigned.
	Owner string
	// Draining is the drain label: the sharder asked Owner to let go.
	Draining bool
}

// Verb is what the sharder does to an object.
type Verb string

const (
	// Assign labels an unassigned object with To.
	Assign Verb = "assign"
	// Drain asks the live owner to let go (the drain label); the owner
	// acknowledges by removing both labels once no worker holds the key,
	// and the object is then assigned like a new one.
	Drain Verb = "drain"
	// Reassign labels an object whose owner's Lease expired with To at
	// once: a member stops handling its shard before its Lease expires,
	// so nobody else can be handling it.
	Reassign Verb = "reassign"
)

// Decision is one action of the sharder.
type Decision struct {
	Verb Verb
	Key  string
	From string // the owner, for Drain and Reassign
	To   string // the new owner, for Assign and Reassign
}

// Decide returns what to do with o given the ring of live members and
// whether a member is live; false when nothing is to be done (in place,
// draining, or no member alive).
func Decide(o Object, ring *Ring, live func(member string) bool) (Decision, bool) {
	want := ring.Owner(o.Key)
	switch {
	case want == "":
		return Decision{}, false
	case o.Owner == "":
		return Decision{Verb: Assign, Key: o.Key, To: want}, true
	case !live(o.Owner):
		return Decision{Verb: Reassign, Key: o.Key, From: o.Owner, To: want}, true
	case o.Owner != want && !o.Draining:
		return Decision{Verb: Drain, Key: o.Key, From: o.Owner}, true
	}
	return Decision{}, false
}
