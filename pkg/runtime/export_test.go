package runtime

import (
	"context"

	"github.com/go-logr/logr"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/opgen-sdk/opgen/apis"
)

// Handle runs one action for key synchronously, for benchmarks that
// measure the pipeline without the queue.
func Handle[T apis.Object](ctx context.Context, c *Controller[T], key cache.ObjectName) {
	c.handle(ctx, key)
}

// Campaign runs the operator's elector alone: it campaigns with opts (all
// fields set) and calls lead while it holds the lease, as Run does, for
// the randomized election test.
func Campaign(ctx context.Context, leases coordinationclient.LeasesGetter, opts LeaderElectionOptions, log logr.Logger, lead func(context.Context) bool) error {
	return newElector(leases, opts, clock.RealClock{}, log).run(ctx, lead)
}

// MemberName is the member name (shard label value) of a replica identity.
func MemberName(identity string) string { return memberName(identity) }
