package shard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apiserver/pkg/sharding"
)

// The server's shard selectors of the buckets, as the API server parses
// and applies them, select each object in exactly the bucket UIDBucket
// names: the ranges tile the hash space.
func TestServerSelectorsTileTheHashSpace(t *testing.T) {
	parsed := make([]func(*metav1.PartialObjectMetadata) bool, Buckets)
	for b := range Buckets {
		sel, err := sharding.Parse(ServerSelector(b))
		require.NoError(t, err, ServerSelector(b))
		parsed[b] = func(obj *metav1.PartialObjectMetadata) bool {
			ok, err := sel.Matches(obj)
			require.NoError(t, err)
			return ok
		}
	}
	counts := make([]int, Buckets)
	for range 2000 {
		obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{UID: uuid.NewUUID()}}
		b := UIDBucket(obj.UID)
		counts[b]++
		for other := range Buckets {
			assert.Equal(t, other == b, parsed[other](obj), "uid %s, bucket %d, selector of %d", obj.UID, b, other)
		}
	}
	for b, n := range counts {
		assert.Positive(t, n, "bucket %d gets objects", b)
	}
	assert.Equal(t, "shardRange(object.metadata.uid, '0x0000000000000000', '0x0400000000000000')", ServerSelector(0))
	assert.Equal(t, "shardRange(object.metadata.uid, '0xfc00000000000000', '0x10000000000000000')", ServerSelector(Buckets-1))
}
