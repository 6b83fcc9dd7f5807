package runtime

import (
	"context"

	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/apis"
)

// Handle runs one action for key synchronously, for benchmarks that
// measure the pipeline without the queue.
func Handle[T apis.Object](ctx context.Context, c *Controller[T], key cache.ObjectName) {
	c.handle(ctx, key)
}
