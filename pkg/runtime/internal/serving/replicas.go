package serving

import (
	"context"
	"fmt"
	"sync"
)

// Runnable is work every replica runs (runtime.Runnable).
type Runnable interface {
	Run(ctx context.Context) error
}

// StartReplicas runs rs until the returned stop is called. The returned
// context is ctx, cancelled too when one of them fails; stop waits for
// them to return and puts the failure in *runErr unless it holds an error
// already.
func StartReplicas[R Runnable](ctx context.Context, rs []R) (context.Context, func(runErr *error)) {
	if len(rs) == 0 {
		return ctx, func(*error) {}
	}
	ctx, fail := context.WithCancelCause(ctx)
	serveCtx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, r := range rs {
		wg.Go(func() {
			err := runServer(serveCtx, r)
			if err == nil || serveCtx.Err() != nil {
				return
			}
			mu.Lock()
			if first == nil {
				first = fmt.Errorf("runtime: server %T stopped: %w", r, err)
				fail(first)
			}
			mu.Unlock()
		})
	}
	return ctx, func(runErr *error) {
		stopServing()
		wg.Wait()
		fail(nil)
		mu.Lock()
		defer mu.Unlock()
		if first != nil && *runErr == nil {
			*runErr = first
		}
	}
}

// runServer runs r and turns a panic into an error.
func runServer(ctx context.Context, r Runnable) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return r.Run(ctx)
}
