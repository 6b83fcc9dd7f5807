package shard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/watch"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// LabelDomain prefixes the bucket label and the Leases' annotations.
const LabelDomain = "shard.opgen.dev/"

// The annotations of the assignment's Lease (an Assignment) and of a
// member's Lease (Held), as JSON.
const (
	AssignmentAnnotation = LabelDomain + "assignment"
	HeldAnnotation       = LabelDomain + "held"
)

// Keys are the names of a sharded operator.
type Keys struct {
	Label       string // the bucket label's key
	Member      string // this replica's member name
	LeasePrefix string // member Leases are LeasePrefix + member
	ShardsLease string // the assignment's Lease
	Namespace   string // of the Leases
	// Server: the members select their buckets of the controllers' kinds
	// with the API server's shard selector (server.go), not by label.
	Server bool
}

// NewKeys returns the names of the operator named operator, whose leader
// Lease is namespace/leaseName, on the replica identity.
func NewKeys(operator, namespace, leaseName, identity string) *Keys {
	return &Keys{
		Label:       LabelDomain + labelSafe(operator, 63),
		Member:      MemberName(identity),
		LeasePrefix: leaseName + "-member-",
		ShardsLease: leaseName + "-shards",
		Namespace:   namespace,
	}
}

var labelUnsafe = regexp.MustCompile(`[^a-z0-9.-]+`)

// MemberName turns a replica's identity into a part of a Lease name and a
// label value. It is lower case, of letters, digits, '-' and '.', at most
// 63 characters long. It ends with a hash of the identity, so that two
// identities never share a name.
func MemberName(identity string) string {
	sum := sha256.Sum256([]byte(identity))
	return labelSafe(identity, 63-7) + "-" + hex.EncodeToString(sum[:3])
}

// labelSafe shortens and cleans s into a label value of at most n
// characters that starts and ends with a letter or digit.
func labelSafe(s string, n int) string {
	s = labelUnsafe.ReplaceAllString(strings.ToLower(s), "-")
	if len(s) > n {
		s = s[:n]
	}
	s = strings.Trim(s, "-.")
	if s == "" || len(validation.IsValidLabelValue(s)) > 0 {
		return "x"
	}
	return s
}

// Selector is the label selector of bucket b.
func (k *Keys) Selector(b int) string { return k.Label + "=" + Label(b) }

// BucketOf returns the bucket of m, an object of a controller's kind: the
// one its label names, or with the server's shard selector its UID's.
func (k *Keys) BucketOf(m metav1.Object) (int, bool) {
	if k.Server {
		return UIDBucket(m.GetUID()), m.GetUID() != ""
	}
	return ParseLabel(m.GetLabels()[k.Label])
}

// Unlabelled selects the objects without a valid bucket label. notin also
// matches objects without the label.
func (k *Keys) Unlabelled() string {
	values := make([]string, Buckets)
	for b := range values {
		values[b] = Label(b)
	}
	return k.Label + " notin (" + strings.Join(values, ",") + ")"
}

// KeyBucket is the bucket of the object namespace/name: the sharder's
// choice for it.
func KeyBucket(namespace, name string) int { return Bucket(namespace + "/" + name) }

// RouteKey is the bucket of a cache key, for NewInformers.
func RouteKey(key string) int {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	return KeyBucket(ns, name)
}

// ReadAssignment reads the assignment's annotation of l. A Lease without
// one has the empty assignment.
func ReadAssignment(l *coordinationv1.Lease) (Assignment, error) {
	var a Assignment
	raw, ok := l.Annotations[AssignmentAnnotation]
	if !ok {
		return a, nil
	}
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return a, fmt.Errorf("runtime: the annotation %s of the Lease %s/%s is not an assignment of sharding (%w): delete the Lease, the leader writes it again", AssignmentAnnotation, l.Namespace, l.Name, err)
	}
	return a, nil
}

// Env is what the member and the sharder talk to and report to.
type Env struct {
	Keys *Keys
	// Coordination runs the informers of the Leases, on the shared
	// connection.
	Coordination coordinationclient.CoordinationV1Interface
	// Leases writes the Leases, on a connection of their own.
	Leases coordinationclient.CoordinationV1Interface
	// Metadata writes the bucket labels.
	Metadata metadata.Interface
	Clock    clock.WithTicker
	// Identity is this replica's, the holder of the assignment's Lease.
	Identity string
	// LeaseDuration and RetryPeriod are leader election's.
	LeaseDuration, RetryPeriod time.Duration
	Log                        logr.Logger
	Hooks                      Hooks
}

// Hooks report what sharding does. Every hook may be nil.
type Hooks struct {
	// Moved reports a move of the sharder, or a take or release of this
	// member. handover is the time from a bucket's drain to its
	// assignment.
	Moved func(mv Move, handover time.Duration)
	// Members reports how many live members the sharder sees.
	Members func(n int)
	// Buckets reports how many buckets this member holds.
	Buckets func(n int)
}

func (h Hooks) moved(mv Move, handover time.Duration) {
	if h.Moved != nil {
		h.Moved(mv, handover)
	}
}

// leaseInformer is an informer of the Leases in ns that tweak selects, as
// client-go's informer factory would make it (watch-list semantics
// included), without linking the factory and its every kind.
func (e Env) leaseInformer(ns string, tweak func(*metav1.ListOptions)) cache.SharedIndexInformer {
	leases := e.Coordination.Leases(ns)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			tweak(&o)
			return leases.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			tweak(&o)
			return leases.Watch(ctx, o)
		},
	}
	return cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, leases), &coordinationv1.Lease{}, 0, cache.Indexers{})
}
