package ownwrites

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// key is the key of object i.
func key(i int) cache.ObjectName { return cache.ObjectName{Namespace: "ns", Name: strconv.Itoa(i)} }

func written(rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "0", ResourceVersion: rv}}
}

// empty reports whether w holds nothing for any key.
func empty(w *Writes[*corev1.ConfigMap]) bool {
	return w.n.Load() == 0 && len(w.objs) == 0 && len(w.rvs) == 0 && len(w.flying) == 0 && len(w.parked) == 0 && len(w.gone) == 0
}

// A write whose answer comes before its watch event is held until the
// event, and then nothing is left of it.
func TestOwnWriteHeldUntilItsEvent(t *testing.T) {
	w := &Writes[*corev1.ConfigMap]{}
	w.Begin(key(0))
	assert.False(t, w.End(key(0), written("12"), true, "11"))
	got, ok := w.Read(key(0), written("11"), true)
	assert.True(t, ok)
	assert.Equal(t, "12", got.ResourceVersion, "a read before the event sees the write")
	assert.True(t, w.Seen(key(0), "12"), "the write's own event wakes nobody")
	w.Read(key(0), written("12"), true)
	assert.True(t, empty(w), "nothing is left once the cache caught up")
}

// The last write to an object, such as the removal of its last finalizer,
// can be answered after the watch already told of the object's deletion.
// Its answer must not be kept: no event of that object follows, so it
// would stay for the life of the process (the churn soak lost about
// 1.7 KB a deleted Todo so).
func TestOwnWriteAnsweredAfterTheDeletion(t *testing.T) {
	w := &Writes[*corev1.ConfigMap]{}
	w.Begin(key(0))
	w.Forget(key(0)) // the watch's delete, while the write is in flight
	assert.False(t, w.End(key(0), written("12"), true, "11"))
	assert.True(t, empty(w), "the deleted object's write is not kept")

	// A write in flight for a new object of the same name is kept.
	w.Begin(key(0))
	w.End(key(0), written("14"), true, "")
	got, ok := w.Read(key(0), nil, false)
	assert.True(t, ok)
	assert.Equal(t, "14", got.ResourceVersion)
}

// Of two writes in flight for one key, a deletion between them drops both
// answers, and an update of a new object seen meanwhile still wakes its
// key.
func TestOwnWritesInFlightAcrossADeletion(t *testing.T) {
	w := &Writes[*corev1.ConfigMap]{}
	w.Begin(key(0))
	w.Begin(key(0))
	w.Forget(key(0))
	assert.True(t, w.Seen(key(0), "20"), "an event waits for the writes in flight")
	woke := w.End(key(0), written("12"), true, "11")
	woke = w.End(key(0), written("13"), true, "12") || woke
	assert.True(t, woke, "the event was no write's: it wakes its key")
	assert.True(t, empty(w))
}

// The event of a write can come while the next write to the object is in
// flight (an action right after the one that wrote): it is the operator's
// own, and wakes nobody.
func TestLateEventOfAnEarlierWrite(t *testing.T) {
	w := &Writes[*corev1.ConfigMap]{}
	w.Begin(key(0))
	assert.False(t, w.End(key(0), written("12"), true, "11"))
	w.Begin(key(0))
	assert.True(t, w.Seen(key(0), "12"), "the first write's event waits for the second's answer")
	assert.False(t, w.End(key(0), written("13"), true, ""), "the late event was the first write's")
	assert.True(t, w.Seen(key(0), "13"))
	w.Read(key(0), written("13"), true)
	assert.True(t, empty(w))
}

// Reads hide what the operator deleted until the cache shows it; the
// deletion's event is its own.
func TestDeletesAreHiddenUntilGone(t *testing.T) {
	var d Deletes
	d.Begin("a")
	d.Begin("b")
	d.Failed("b")
	assert.True(t, d.Hidden("a"))
	assert.False(t, d.Hidden("b"), "a failed delete hides nothing")
	assert.True(t, d.Gone("a"), "the deletion's event is the operator's own")
	assert.False(t, d.Hidden("a"))
	assert.False(t, d.Gone("c"))

	var c Changes
	c.Mark("o", "ConfigMap ns/a created")
	c.Mark("o", "ConfigMap ns/a created")
	c.Mark("o", "ConfigMap ns/b deleted")
	assert.Equal(t, []string{"ConfigMap ns/a created", "ConfigMap ns/b deleted"}, c.Take("o"))
	assert.Nil(t, c.Take("o"), "taken once")
}
