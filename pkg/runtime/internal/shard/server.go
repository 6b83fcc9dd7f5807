package shard

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/bits"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The API server's shard selector (KEP-5866, alpha in Kubernetes 1.37
// behind the ShardedListAndWatch feature gate) selects the objects whose
// FNV-1a hash of a metadata field falls in a range. Where the server
// offers it, a member lists and watches its buckets of a controller's
// kind through it: the bucket of an object is the range its UID's hash
// falls in, so no object needs a label, and the sharder writes none.
// Owned objects still carry their owner's bucket as a label: their own UIDs
// hash elsewhere, and the operator writes them anyway.

// serverKey is the field the buckets hash.
const serverKey = "object.metadata.uid"

// bucketBits is log2(Buckets): bucket b is the range of hashes whose top
// bucketBits bits are b.
var bucketBits = bits.TrailingZeros(Buckets)

// UIDBucket is the bucket of an object with uid under the server's shard
// selector.
func UIDBucket(uid types.UID) int {
	h := fnv.New64a()
	h.Write([]byte(uid))
	return int(h.Sum64() >> (64 - bucketBits))
}

// ServerSelector is the shard selector of bucket b.
func ServerSelector(b int) string {
	start := uint64(b) << (64 - bucketBits)
	end := fmt.Sprintf("0x%016x", uint64(b+1)<<(64-bucketBits))
	if b+1 == Buckets {
		end = "0x10000000000000000" // 2^64, the end of the hash space
	}
	return fmt.Sprintf("shardRange(%s, '0x%016x', '%s')", serverKey, start, end)
}

// Share selects a member's bucket of a controller's kind in a list or
// watch: by its label, or by the server's shard selector.
type Share struct {
	Label  string // a label selector
	Server string // a shard selector
}

// Share returns the selector of bucket b of a controller's kind.
func (k *Keys) Share(b int) Share {
	if k.Server {
		return Share{Server: ServerSelector(b)}
	}
	return Share{Label: k.Selector(b)}
}

// Choose selects the members' buckets by the API server's shard selector
// where the server applies it (Keys.Server), else by label, and logs
// which. Every replica chooses at its start.
func (e Env) Choose(ctx context.Context) error {
	server, err := e.ServerSelects(ctx)
	if err != nil {
		return err
	}
	e.Keys.Server = server
	by := "label " + e.Keys.Label
	if server {
		by = "the API server's shard selector, without labels"
	}
	e.Log.Info("sharding", "by", by)
	return nil
}

// OwnerLabel is the bucket label of an owned object whose controller owner
// is ns/name with uid: under the server's selector its UID's bucket, else
// the label of owner (as cached; nil when it is not) or its key's bucket.
func (k *Keys) OwnerLabel(ns, name string, uid types.UID, owner metav1.Object) string {
	if k.Server {
		return Label(UIDBucket(uid))
	}
	if owner != nil && !reflect.ValueOf(owner).IsNil() {
		if v, ok := owner.GetLabels()[k.Label]; ok {
			return v
		}
	}
	return Label(KeyBucket(ns, name))
}

// Route returns the bucket a cache key is looked up in first, for
// NewInformers: by label, the key's; nil under the server's selector,
// where a bucket follows the UID.
func (k *Keys) Route() func(key string) int {
	if k.Server {
		return nil
	}
	return RouteKey
}

// ServerSelects reports whether the API server applies shard selectors: it
// lists the Leases of the operator's namespace (one at most) with a
// selector of the whole hash space, and a server that applied it says so
// in the list's shardInfo. A server without the feature ignores the
// selector and sends none.
func (e Env) ServerSelects(ctx context.Context) (bool, error) {
	list, err := e.Leases.Leases(e.Keys.Namespace).List(ctx, metav1.ListOptions{
		Limit:         1,
		ShardSelector: fmt.Sprintf("shardRange(%s, '0x0000000000000000', '0x10000000000000000')", serverKey),
	})
	if err != nil {
		return false, fmt.Errorf("runtime: sharding: ask whether the API server applies shard selectors: %w", err)
	}
	return list.ShardInfo != nil, nil
}
