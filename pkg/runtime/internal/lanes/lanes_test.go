package lanes

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/client-go/tools/cache"
)

func key(i int) cache.ObjectName { return cache.ObjectName{Namespace: "ns", Name: strconv.Itoa(i)} }

// The lanes serve urgent keys first, then keys someone's change woke, then
// bulk keys; a user key queued as bulk moves up when touched; and bulk
// keys get a turn after userBurst user keys in a row.
func TestLaneQueue(t *testing.T) {
	urgent := map[cache.ObjectName]bool{}
	q := &Queue{Urgent: func(k cache.ObjectName) bool { return urgent[k] }, Marks: &Marks{}}
	for i := range 3 {
		q.Push(key(i)) // bulk: 0 1 2
	}
	q.Marks.Mark(key(10))
	q.Push(key(10)) // user
	urgent[key(20)] = true
	q.Push(key(20)) // urgent
	q.Marks.Mark(key(1))
	q.Touch(key(1)) // bulk → user
	assert.Equal(t, 5, q.Len())
	var got []string
	for q.Len() > 0 {
		got = append(got, q.Pop().Name)
	}
	assert.Equal(t, []string{"20", "10", "1", "0", "2"}, got)

	for i := range userBurst + 2 {
		q.Marks.Mark(key(100 + i))
		q.Push(key(100 + i))
	}
	q.Push(key(1))
	got = got[:0]
	for q.Len() > 0 {
		got = append(got, q.Pop().Name)
	}
	assert.Equal(t, "1", got[userBurst], "a bulk key after %d user keys", userBurst)
}

// A key served from the user lane and retried goes back to it; a key
// served from the bulk lane, or one that succeeded, does not; each lane's
// depth is reported as it changes.
func TestRetryKeepsTheLane(t *testing.T) {
	depth := map[string]int{}
	q := &Queue{Urgent: func(cache.ObjectName) bool { return false }, Marks: &Marks{},
		Depth: func(lane string, n int) { depth[lane] = n }}
	q.Push(key(1)) // bulk
	q.Marks.Mark(key(2))
	q.Push(key(2)) // user
	q.Marks.Mark(key(3))
	q.Push(key(3)) // user
	assert.Equal(t, map[string]int{"user": 2, "bulk": 1}, depth)
	assert.Equal(t, "2", q.Pop().Name)
	assert.Equal(t, "3", q.Pop().Name)
	assert.Equal(t, "1", q.Pop().Name)
	assert.Equal(t, map[string]int{"user": 0, "bulk": 0}, depth)

	q.Marks.Finished(key(2), true)  // failed: retried
	q.Marks.Finished(key(3), false) // succeeded
	q.Marks.Finished(key(1), true)  // bulk work failed
	assert.Empty(t, q.Marks.current, "every key served is forgotten once its action ended")
	for i := range 3 {
		q.Push(key(10 + i)) // bulk work queued before the retries come due
	}
	q.Push(key(1))
	q.Push(key(3))
	q.Push(key(2))
	assert.Equal(t, map[string]int{"user": 1, "bulk": 5}, depth)
	assert.Equal(t, "2", q.Pop().Name, "the retried user change goes first")
	assert.Equal(t, "10", q.Pop().Name)
}

// A lane that drains lets its array go: after a start's burst of 10,000
// keys the queue holds nothing.
func TestDrainedLaneReleasesItsArray(t *testing.T) {
	q := &Queue{Urgent: func(cache.ObjectName) bool { return false }, Marks: &Marks{}}
	for i := range 10000 {
		q.Push(key(i))
	}
	for q.Len() > 1 {
		q.Pop()
	}
	assert.NotZero(t, cap(q.fifo[laneBulk]), "one key left: the array stays")
	q.Pop()
	for l := range lanes {
		assert.Zero(t, cap(q.fifo[l]), "lane %s", Names[l])
	}
}

// Finalize keys go first, but after FinalizeBurst of them in a row one key
// of the other lanes gets a turn, so that a stream of new objects cannot
// hold back the first actions and Deletes of those already protected;
// with no other key waiting, finalize keys run on.
func TestFinalizeLaneLeavesOthersATurn(t *testing.T) {
	q := &Queue{Urgent: func(k cache.ObjectName) bool { return k.Name[0] == 'f' }, Marks: &Marks{}}
	name := func(prefix string, i int) cache.ObjectName {
		return cache.ObjectName{Namespace: "ns", Name: prefix + strconv.Itoa(i)}
	}
	q.Push(name("b", 0)) // bulk
	for i := range 2 {
		q.Marks.Mark(name("u", i))
		q.Push(name("u", i)) // user
	}
	for i := range 3*FinalizeBurst + 2 {
		q.Push(name("f", i))
	}
	var got []string
	for q.Len() > 0 {
		got = append(got, q.Pop().Name)
	}
	want := []string{}
	f := 0
	for _, other := range []string{"u0", "u1", "b0"} {
		for range FinalizeBurst {
			want = append(want, "f"+strconv.Itoa(f))
			f++
		}
		want = append(want, other)
	}
	want = append(want, "f"+strconv.Itoa(f), "f"+strconv.Itoa(f+1))
	assert.Equal(t, want, got)
}
