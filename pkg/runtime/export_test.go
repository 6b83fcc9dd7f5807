package runtime

import (
	"context"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/election"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/shard"
)

// Handle runs one action for key synchronously, for benchmarks that
// measure the pipeline without the queue.
func Handle[T apis.Object](ctx context.Context, c *Controller[T], key cache.ObjectName) {
	c.handle(ctx, key, c.queue.Triggers(key))
}

// Campaign runs the operator's elector alone: it campaigns with opts (all
// fields set) and calls lead while it holds the lease, as Run does, for
// the randomized election test.
func Campaign(ctx context.Context, leases coordinationclient.LeasesGetter, opts LeaderElectionOptions, log logr.Logger, lead func(context.Context) bool) error {
	cfg := election.Config{
		Namespace: opts.Namespace, LeaseName: opts.LeaseName, Identity: opts.Identity,
		LeaseDuration: opts.LeaseDuration, RenewDeadline: opts.RenewDeadline, RetryPeriod: opts.RetryPeriod,
		Lost: ErrLostLeadership,
	}
	return election.New(leases, cfg, clock.RealClock{}, log).Run(ctx, lead)
}

// MemberName is the member name (shard label value) of a replica identity.
func MemberName(identity string) string { return shard.MemberName(identity) }

// ShardOwners returns the member each bucket is assigned to, as the
// sharder of the operator with lease name leaseName recorded it; nil
// before its first assignment.
func ShardOwners(ctx context.Context, leases coordinationclient.LeasesGetter, namespace, leaseName string) ([]string, error) {
	l, err := leases.Leases(namespace).Get(ctx, leaseName+"-shards", metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	a, err := shard.ReadAssignment(l)
	return a.Buckets, err
}

// ShardBucket returns the bucket a label value names, -1 for none.
func ShardBucket(label string) int {
	if b, ok := shard.ParseLabel(label); ok {
		return b
	}
	return -1
}

// Requeues is how many times key was queued after a backoff since its
// last success (the rate limiter's count).
func Requeues[T apis.Object](c *Controller[T], key cache.ObjectName) int {
	return c.queue.NumRequeues(key)
}
