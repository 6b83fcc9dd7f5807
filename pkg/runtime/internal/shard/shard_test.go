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

func TestDecide(t *testing.T) {
	t.Parallel()
	ms := members(3)
	r := NewRing(ms, 0)
	key := "ns/a"
	want := r.Owner(key)
	var other string
	for _, m := range ms {
		if m != want {
			other = m
			break
		}
	}
	alive := func(string) bool { return true }
	deadOther := func(m string) bool { return m != other }
	for _, tc := range []struct {
		name string
		o    Object
		live func(string) bool
		want Decision
		ok   bool
	}{
		{"unassigned", Object{Key: key}, alive, Decision{Verb: Assign, Key: key, To: want}, true},
		{"in place", Object{Key: key, Owner: want}, alive, Decision{}, false},
		{"moved by the ring, owner alive: drain", Object{Key: key, Owner: other}, alive, Decision{Verb: Drain, Key: key, From: other}, true},
		{"draining: wait for the owner", Object{Key: key, Owner: other, Draining: true}, alive, Decision{}, false},
		{"owner's lease expired: reassign", Object{Key: key, Owner: other}, deadOther, Decision{Verb: Reassign, Key: key, From: other, To: want}, true},
		{"draining and the owner died: reassign", Object{Key: key, Owner: other, Draining: true}, deadOther, Decision{Verb: Reassign, Key: key, From: other, To: want}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Decide(tc.o, r, tc.live)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
	_, ok := Decide(Object{Key: key}, NewRing(nil, 0), alive)
	assert.False(t, ok, "no member: nothing to do")
}
