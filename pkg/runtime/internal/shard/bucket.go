package shard

import (
	"slices"
	"strconv"
)

// Buckets is how many buckets a controller's objects are spread over. An
// object's bucket is a hash of its key, written once as a label; the
// sharder assigns buckets, not objects, to the members, so a move writes
// nothing on the objects. It bounds the members that get a share.
const Buckets = 64

// Bucket returns the bucket of key (namespace/name; /name for a
// cluster-scoped object).
func Bucket(key string) int { return int(hash("object/"+key) % Buckets) }

// Label is the label value of bucket b.
func Label(b int) string { return strconv.Itoa(b) }

// ParseLabel returns the bucket a label value names, false when it names
// none.
func ParseLabel(v string) (int, bool) {
	b, err := strconv.Atoi(v)
	if err != nil || b < 0 || b >= Buckets || strconv.Itoa(b) != v {
		return 0, false
	}
	return b, true
}

// Owners returns the member each bucket belongs to ("" for a ring without
// members): consistent hashing with bounded loads. Bucket by bucket, the
// first member clockwise from the bucket's point on the ring that holds
// fewer than ceil(Buckets/members) buckets. Every member gets its fair
// number of buckets (within one), and a member joining or leaving moves
// about 1/N of them.
func (r *Ring) Owners() []string {
	out := make([]string, Buckets)
	members := r.Members()
	if len(members) == 0 {
		return out
	}
	limit := (Buckets + len(members) - 1) / len(members)
	load := map[string]int{}
	for b := range out {
		i := r.search(hash("bucket#" + strconv.Itoa(b)))
		for load[r.points[i].member] >= limit {
			i = (i + 1) % len(r.points)
		}
		out[b] = r.points[i].member
		load[out[b]]++
	}
	return out
}

// Sticky returns the owners the sharder moves the buckets toward: each
// bucket stays with its current owner (cur) while that member is live and
// within its fair share, and the ring's owner (want, Ring.Owners) takes
// the others. So a member that leaves or crashes moves only its own
// buckets; bounded loads alone would move a few of the others too. A
// member under its share (one that joined) then takes buckets from those
// above it, the ones the ring gives it first, until each holds
// Buckets/len(live) or one more.
func Sticky(cur, want, live []string) []string {
	if len(live) == 0 {
		return want
	}
	isLive := map[string]bool{}
	for _, m := range live {
		isLive[m] = true
	}
	limit := (Buckets + len(live) - 1) / len(live)
	out := make([]string, Buckets)
	load := map[string]int{}
	for b, owner := range cur {
		if b < Buckets && owner != "" && isLive[owner] && load[owner] < limit {
			out[b] = owner
			load[owner]++
		}
	}
	floor := Buckets / len(live)
	for b := range out {
		if out[b] != "" {
			continue
		}
		to := want[b]
		if to == "" || !isLive[to] || load[to] >= floor {
			to = leastLoaded(live, load) // fills every member to its share first
		}
		out[b] = to
		load[to]++
	}
	share(out, want, live, load)
	return out
}

// share moves buckets from the members above Buckets/len(live) to those
// below it, preferring the buckets the ring gives the taker.
func share(out, want, live []string, load map[string]int) {
	floor := Buckets / len(live)
	for _, taker := range live {
		for load[taker] < floor {
			b := -1
			for i := range out { // a bucket the ring gives the taker, held by a member above its share
				if want[i] == taker && out[i] != taker && load[out[i]] > floor {
					b = i
					break
				}
			}
			if b < 0 {
				giver := mostLoaded(live, load)
				if load[giver] <= floor {
					return
				}
				for i := len(out) - 1; i >= 0; i-- {
					if out[i] == giver {
						b = i
						break
					}
				}
			}
			load[out[b]]--
			out[b] = taker
			load[taker]++
		}
	}
}

func leastLoaded(live []string, load map[string]int) string {
	best := live[0]
	for _, m := range live[1:] {
		if load[m] < load[best] {
			best = m
		}
	}
	return best
}

func mostLoaded(live []string, load map[string]int) string {
	best := live[0]
	for _, m := range live[1:] {
		if load[m] > load[best] {
			best = m
		}
	}
	return best
}

// Verb is what the sharder does with a bucket.
type Verb string

const (
	// Assign gives an unassigned bucket to To.
	Assign Verb = "assign"
	// Drain takes a bucket from its live member From, to give it to
	// another: the bucket is unassigned, From stops handling its objects,
	// waits for the actions in flight, stops caching them and reports
	// that it no longer holds the bucket; the bucket is then assigned.
	Drain Verb = "drain"
	// Reassign gives the bucket of a member whose Lease expired to To at
	// once: a member stops working before its Lease expires, so nobody
	// is handling the bucket's objects.
	Reassign Verb = "reassign"
	// Take is a member starting to cache and handle a bucket.
	Take Verb = "take"
	// Release is a member letting go of a bucket.
	Release Verb = "release"
)

// Move is one change of the assignment.
type Move struct {
	Bucket   int
	Verb     Verb
	From, To string
}

// Assignment is the sharder's record of which member holds which bucket,
// kept in a Lease's annotation so that a new leader goes on from it.
type Assignment struct {
	// Generation counts the assignment's changes; members report the one
	// they applied (Held).
	Generation int64 `json:"generation"`
	// Buckets[b] is the member of bucket b, "" while unassigned.
	Buckets []string `json:"buckets"`
	// Draining names, for an unassigned bucket, the member that held it
	// and must let go first.
	Draining map[int]Draining `json:"draining,omitempty"`
}

// Draining is a bucket taken from a live member From at Generation.
type Draining struct {
	From       string `json:"from"`
	Generation int64  `json:"generation"`
}

// Held is what a member reports in its own Lease: the assignment it
// applied, and the buckets it holds since.
type Held struct {
	Generation int64 `json:"generation"`
	Buckets    []int `json:"buckets"`
}

// Released reports whether a member that reported h has let go of bucket
// b drained from it at generation g.
func (h Held) Released(b int, g int64) bool {
	return h.Generation >= g && !slices.Contains(h.Buckets, b)
}

// Plan returns the next assignment from the current one and the owners
// the ring wants (Ring.Owners), given which members are live and what
// each reported it holds. A bucket goes to a member only when no other
// live member may hold it: one drained from a live member waits until
// that member reported it let go (Held.Released), so no two members ever
// handle its objects at once. next is cur, unchanged, when there are no
// moves.
func Plan(cur Assignment, want []string, live func(member string) bool, held func(member string) Held) (next Assignment, moves []Move) {
	next = Assignment{Generation: cur.Generation + 1, Buckets: slices.Clone(cur.Buckets), Draining: map[int]Draining{}}
	if len(next.Buckets) != Buckets {
		next.Buckets = make([]string, Buckets)
	}
	for b, d := range cur.Draining {
		next.Draining[b] = d
	}
	for b, owner := range next.Buckets {
		to := want[b]
		switch {
		case to == "" || owner == to:
			continue
		case owner != "" && live(owner):
			next.Buckets[b] = ""
			next.Draining[b] = Draining{From: owner, Generation: next.Generation}
			moves = append(moves, Move{Bucket: b, Verb: Drain, From: owner})
			continue
		case owner != "":
			next.Buckets[b] = to
			delete(next.Draining, b)
			moves = append(moves, Move{Bucket: b, Verb: Reassign, From: owner, To: to})
			continue
		}
		d, draining := next.Draining[b]
		if draining && d.From != to && live(d.From) && !held(d.From).Released(b, d.Generation) {
			continue // the last member has not let go yet
		}
		next.Buckets[b] = to
		delete(next.Draining, b)
		moves = append(moves, Move{Bucket: b, Verb: Assign, From: d.From, To: to})
	}
	if len(next.Draining) == 0 {
		next.Draining = nil
	}
	if len(moves) == 0 {
		return cur, nil
	}
	return next, moves
}
