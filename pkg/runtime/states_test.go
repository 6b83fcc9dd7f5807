package runtime

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/client-go/tools/cache"
)

// TestStatesForgetCompacts: once half of the most entries the states held
// are forgotten, the map is made again with what is left, the same state
// under each key, so a member that let go of buckets does not keep their
// room.
func TestStatesForgetCompacts(t *testing.T) {
	s := &states{m: map[cache.ObjectName]*objectState{}}
	n := 4 * compactBelow
	keys := make([]cache.ObjectName, n)
	for i := range keys {
		keys[i] = cache.ObjectName{Namespace: "ns", Name: strconv.Itoa(i)}
		s.of(keys[i], "uid-"+strconv.Itoa(i)).handled = int64(i)
	}
	assert.Equal(t, n, s.peak)
	before := s.m
	for _, k := range keys[:n/2-1] {
		s.forget(k)
	}
	assert.Equal(t, n, s.peak, "not yet half")
	s.forget(keys[n/2-1])
	assert.Equal(t, n/2, s.peak, "made again at half")
	assert.NotEqual(t, reflect.ValueOf(before).UnsafePointer(), reflect.ValueOf(s.m).UnsafePointer(), "a new map")
	for i, k := range keys[n/2:] {
		st := s.peek(k)
		if assert.NotNil(t, st, "%v kept", k) {
			assert.Equal(t, int64(n/2+i), st.handled, "%v keeps its state", k)
		}
	}
	for _, k := range keys[n/2 : n/2+compactBelow/2] {
		s.forget(k)
	}
	assert.Less(t, len(s.m), s.peak, "short of half again, the map is left alone")
}
