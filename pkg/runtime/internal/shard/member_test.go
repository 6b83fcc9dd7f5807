package shard

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// A member name is a label value and part of a Lease name, whatever the
// identity, and two identities never share one.
func TestMemberName(t *testing.T) {
	seen := map[string]string{}
	for _, id := range []string{
		"todo-operator-7d9f8b6c5-x2k4q", "host_12ab34", "Host_12AB34", "", "__", strings.Repeat("a", 300),
		strings.Repeat("a", 300) + "b", "pod.with.dots", "-leading-and-trailing-",
	} {
		m := MemberName(id)
		assert.Empty(t, validation.IsValidLabelValue(m), "%q → %q", id, m)
		assert.Empty(t, validation.IsDNS1123Subdomain("op-member-"+m), "%q → %q", id, m)
		if other, ok := seen[m]; ok {
			t.Errorf("%q and %q share the member name %q", id, other, m)
		}
		seen[m] = id
	}
	assert.True(t, strings.HasPrefix(MemberName("todo-operator-7d9f8b6c5-x2k4q"), "todo-operator-7d9f8b6c5-x2k4q-"), "a Pod name stays readable")
}

func TestShardLabels(t *testing.T) {
	k := NewKeys("Todo_Operator", "", "todo", "pod-a")
	assert.Equal(t, "shard.opgen.dev/todo-operator", k.Label)
	assert.Empty(t, validation.IsQualifiedName(k.Label))
	assert.Equal(t, "todo-member-", k.LeasePrefix)
	assert.Equal(t, "todo-shards", k.ShardsLease)

	bucket7, err := labels.Parse(k.Selector(7))
	require.NoError(t, err)
	unlabelled, err := labels.Parse(k.Unlabelled())
	require.NoError(t, err)
	for _, tc := range []struct {
		labels        labels.Set
		in7, unlabeld bool
	}{
		{labels.Set{}, false, true},
		{labels.Set{k.Label: "7"}, true, false},
		{labels.Set{k.Label: "63"}, false, false},
		{labels.Set{k.Label: "64"}, false, true},
		{labels.Set{k.Label: "seven"}, false, true},
		{labels.Set{"other": "7"}, false, true},
	} {
		assert.Equal(t, tc.in7, bucket7.Matches(tc.labels), "bucket 7 selects %v", tc.labels)
		assert.Equal(t, tc.unlabeld, unlabelled.Matches(tc.labels), "the sharder labels %v", tc.labels)
		b, ok := k.BucketOf(&metav1.ObjectMeta{Labels: tc.labels})
		assert.Equal(t, !tc.unlabeld, ok, "%v names a bucket", tc.labels)
		if ok {
			assert.Equal(t, tc.labels[k.Label], strconv.Itoa(b))
		}
	}
}

// A member lets go of a bucket only once the actions in flight on its
// objects ended, and starts none meanwhile.
func TestReleaseWaitsForActions(t *testing.T) {
	m := NewMember(Env{})
	require.NoError(t, m.take(3))
	require.True(t, m.Enter(3), "an action on an object of a held bucket")
	assert.False(t, m.Enter(4), "no action on a bucket not held")

	var ended atomic.Bool
	released := make(chan bool)
	go func() {
		m.release(3)
		released <- ended.Load()
	}()
	require.Eventually(t, func() bool { return !m.Holds(3) }, 10*time.Second, time.Millisecond, "the release to close the bucket")
	assert.False(t, m.Enter(3), "no new action once the release began")
	ended.Store(true)
	m.Exit(3)
	assert.True(t, <-released, "the release returned before the action in flight ended")
	assert.Empty(t, m.heldBuckets())
}
