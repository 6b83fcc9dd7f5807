package shard

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("ns-%d/todo-%05d", i%7, i)
	}
	return out
}

func members(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("operator-7d9f8c-%c%d", 'a'+i, i)
	}
	return out
}

// TestRingBalances: with 128 points each, every member of 2 to 8 gets its
// share of 20,000 keys within 20%.
func TestRingBalances(t *testing.T) {
	t.Parallel()
	ks := keys(20000)
	for n := 2; n <= 8; n++ {
		r := NewRing(members(n), 0)
		counts := map[string]int{}
		for _, k := range ks {
			counts[r.Owner(k)]++
		}
		require.Len(t, counts, n)
		fair := float64(len(ks)) / float64(n)
		for m, c := range counts {
			assert.InDelta(t, fair, float64(c), 0.2*fair, "%d members: %s has %d keys", n, m, c)
		}
	}
}

// TestRingMovesLittle: a member joining takes about 1/(N+1) of the keys,
// all from others to itself; a member leaving gives away only its own.
func TestRingMovesLittle(t *testing.T) {
	t.Parallel()
	ks := keys(20000)
	ms := members(5)
	before := NewRing(ms[:4], 0)
	after := NewRing(ms, 0)
	moved := 0
	for _, k := range ks {
		a, b := before.Owner(k), after.Owner(k)
		if a != b {
			moved++
			assert.Equal(t, ms[4], b, "a key moves only to the new member")
		}
	}
	share := float64(moved) / float64(len(ks))
	t.Logf("a fifth member took %.1f%% of the keys", 100*share)
	assert.InDelta(t, 0.2, share, 0.05)

	gone := NewRing(append(append([]string{}, ms[:2]...), ms[3:]...), 0)
	for _, k := range ks {
		if after.Owner(k) != ms[2] {
			assert.Equal(t, after.Owner(k), gone.Owner(k), "only the leaving member's keys move")
		}
	}
}

// TestRingIsTheSameEverywhere: the order of the members and duplicates do
// not change the ring.
func TestRingIsTheSameEverywhere(t *testing.T) {
	t.Parallel()
	ms := members(4)
	a := NewRing(ms, 0)
	b := NewRing([]string{ms[3], ms[1], ms[0], ms[2], ms[1]}, 0)
	for _, k := range keys(2000) {
		require.Equal(t, a.Owner(k), b.Owner(k))
	}
	assert.Equal(t, ms, b.Members())
	assert.Empty(t, NewRing(nil, 0).Owner("x"))
	var nilRing *Ring
	assert.Empty(t, nilRing.Owner("x"))
}

func TestOwnersBalanceBuckets(t *testing.T) {
	t.Parallel()
	for n := 1; n <= 7; n++ {
		owners := NewRing(members(n), 0).Owners()
		load := map[string]int{}
		for _, m := range owners {
			load[m]++
		}
		require.Len(t, load, n, "every member gets buckets; none more than its fair share, rounded up")
		for m, l := range load {
			assert.LessOrEqual(t, l, (Buckets+n-1)/n, "%d members: %s holds too many", n, m)
		}
	}
	assert.Equal(t, make([]string, Buckets), NewRing(nil, 0).Owners(), "no member: no owner")
}

func TestOwnersMoveLittle(t *testing.T) {
	t.Parallel()
	for n := 2; n <= 6; n++ {
		before := NewRing(members(n), 0).Owners()
		after := NewRing(members(n+1), 0).Owners()
		moved := 0
		for b := range before {
			if before[b] != after[b] {
				moved++
			}
		}
		// A perfect move gives the newcomer its Buckets/(n+1); bounded
		// loads may shift a few more.
		assert.LessOrEqual(t, moved, 2*Buckets/(n+1)+2, "%d -> %d members", n, n+1)
	}
}

func TestBucketLabels(t *testing.T) {
	t.Parallel()
	seen := map[int]bool{}
	for i := range 10000 {
		b := Bucket(fmt.Sprintf("ns/object-%d", i))
		require.True(t, b >= 0 && b < Buckets)
		seen[b] = true
		got, ok := ParseLabel(Label(b))
		require.True(t, ok)
		require.Equal(t, b, got)
	}
	assert.Len(t, seen, Buckets, "keys spread over every bucket")
	for _, bad := range []string{"", "x", "-1", "64", "01", " 1"} {
		_, ok := ParseLabel(bad)
		assert.False(t, ok, "%q is no bucket", bad)
	}
}

func TestPlan(t *testing.T) {
	t.Parallel()
	alive := func(string) bool { return true }
	deadA := func(m string) bool { return m != "a" }
	holds := func(gen int64, buckets ...int) func(string) Held {
		return func(string) Held { return Held{Generation: gen, Buckets: buckets} }
	}
	drainedA := map[int]Draining{7: {From: "a", Generation: 5}}
	for _, tc := range []struct {
		name      string
		cur, want string
		draining  map[int]Draining
		live      func(string) bool
		held      func(string) Held
		next      string
		move      *Move
	}{
		{"unassigned", "", "b", nil, alive, holds(0), "b", &Move{Verb: Assign, To: "b"}},
		{"in place", "b", "b", nil, alive, holds(0), "b", nil},
		{"no member", "a", "", nil, alive, holds(0), "a", nil},
		{"moved by the ring, owner alive: drain", "a", "b", nil, alive, holds(0), "", &Move{Verb: Drain, From: "a"}},
		{"drained, the last member still holds it: wait", "", "b", drainedA, alive, holds(5, 7), "", nil},
		{"drained, the last member has not seen the drain: wait", "", "b", drainedA, alive, holds(4), "", nil},
		{"drained and let go: assign", "", "b", drainedA, alive, holds(5), "b", &Move{Verb: Assign, From: "a", To: "b"}},
		{"drained and the last member died: assign", "", "b", drainedA, deadA, holds(4, 7), "b", &Move{Verb: Assign, From: "a", To: "b"}},
		{"drained, and the ring wants it back: assign", "", "a", drainedA, alive, holds(5, 7), "a", &Move{Verb: Assign, From: "a", To: "a"}},
		{"owner's lease expired: reassign", "a", "b", nil, deadA, holds(0), "b", &Move{Verb: Reassign, From: "a", To: "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := Assignment{Generation: 5, Buckets: make([]string, Buckets), Draining: tc.draining}
			want := make([]string, Buckets)
			cur.Buckets[7], want[7] = tc.cur, tc.want
			next, moves := Plan(cur, want, tc.live, tc.held)
			assert.Equal(t, tc.next, next.Buckets[7])
			assert.Equal(t, tc.cur, cur.Buckets[7], "the current assignment is left alone")
			if tc.move == nil {
				assert.Empty(t, moves)
				assert.Equal(t, int64(5), next.Generation, "no move: the same generation")
				return
			}
			tc.move.Bucket = 7
			assert.Equal(t, []Move{*tc.move}, moves)
			assert.Equal(t, int64(6), next.Generation)
			if tc.move.Verb == Drain {
				assert.Equal(t, map[int]Draining{7: {From: "a", Generation: 6}}, next.Draining)
			} else {
				assert.Empty(t, next.Draining)
			}
		})
	}
}

// A member that leaves moves only its own buckets; one that joins takes
// its share from the others; either way every member holds its share,
// within one; without a change of members nothing moves.
func TestSticky(t *testing.T) {
	for n := 2; n <= 6; n++ {
		ms := members(n)
		want := NewRing(ms, 0).Owners()
		cur := Sticky(make([]string, Buckets), want, ms)
		balanced(t, cur, ms)
		assert.Equal(t, cur, Sticky(cur, want, ms), "no change: no move")
		for victim := range n {
			rest := append(append([]string{}, ms[:victim]...), ms[victim+1:]...)
			after := Sticky(cur, NewRing(rest, 0).Owners(), rest)
			for b := range cur {
				if cur[b] != ms[victim] {
					assert.Equal(t, cur[b], after[b], "n=%d: bucket %d of a live member moved when %s left", n, b, ms[victim])
				}
			}
			balanced(t, after, rest)
		}
		joined := append(ms, "newcomer")
		after := Sticky(cur, NewRing(joined, 0).Owners(), joined)
		moved := 0
		for b := range cur {
			if cur[b] != after[b] {
				moved++
				assert.Equal(t, "newcomer", after[b], "a bucket moves only to the newcomer")
			}
		}
		assert.LessOrEqual(t, moved, (Buckets+len(joined)-1)/len(joined), "n=%d: the newcomer takes its share and no more", n)
		balanced(t, after, joined)
	}
}

func balanced(t *testing.T, owners, live []string) {
	t.Helper()
	load := map[string]int{}
	for _, o := range owners {
		load[o]++
	}
	for _, m := range live {
		assert.GreaterOrEqual(t, load[m], Buckets/len(live), "%s holds less than its share", m)
		assert.LessOrEqual(t, load[m], (Buckets+len(live)-1)/len(live), "%s holds more than its share", m)
	}
}
