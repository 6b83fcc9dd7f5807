package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Runnable is work an operator runs beside its controllers: on the leader
// only (AddLeaderRunnable) or on every replica (AddReplicaRunnable). Run
// must return soon after ctx ends.
type Runnable interface {
	Run(ctx context.Context) error
}

// RunnableFunc adapts a function to a Runnable.
type RunnableFunc func(ctx context.Context) error

// Run calls f.
func (f RunnableFunc) Run(ctx context.Context) error { return f(ctx) }

var _ Runnable = RunnableFunc(nil)

// AddLeaderRunnable adds r to the work only the leader runs: periodic
// tasks and the scheduler are some. r runs while this replica leads, and
// again after a handover back to it. It must be called before Run.
func (o *Operator) AddLeaderRunnable(r Runnable) error {
	return o.addRunnable(&o.runnables, "AddLeaderRunnable", r)
}

// AddReplicaRunnable adds r to the work every replica runs, leader or not:
// the webhook server is one, as the API server calls any replica behind
// the webhook Service. r runs once per Run. It starts before the caches
// sync, as a conversion webhook must answer the informers' lists. Its
// context ends only after the workers drained at shutdown, so that their
// last writes are still admitted. An error r returns before then stops
// the operator: Run returns it. It must be called before Run.
func (o *Operator) AddReplicaRunnable(r Runnable) error {
	return o.addRunnable(&o.replicaRunnables, "AddReplicaRunnable", r)
}

func (o *Operator) addRunnable(to *[]Runnable, method string, r Runnable) error {
	if r == nil {
		return fmt.Errorf("runtime: Operator.%s: the Runnable is nil", method)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.started {
		return fmt.Errorf("runtime: Operator.%s: the operator already runs; add every Runnable before Run", method)
	}
	*to = append(*to, r)
	return nil
}

// runRunnable runs r, logging an error it returns and a panic.
func (o *Operator) runRunnable(ctx context.Context, r Runnable) {
	defer func() {
		if p := recover(); p != nil {
			o.log.Error(fmt.Errorf("panic: %v", p), "a Runnable panicked", "runnable", fmt.Sprintf("%T", r))
		}
	}()
	if err := r.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		o.log.Error(err, "a Runnable stopped with an error", "runnable", fmt.Sprintf("%T", r))
	}
}

// leadership names this replica's lease for telemetry.
func (o *Operator) leadership() telemetry.Leadership {
	le := o.opts.LeaderElection
	l := telemetry.Leadership{Identity: le.Identity}
	if !le.Disabled {
		l.Lease = le.Namespace + "/" + le.LeaseName
	}
	return l
}

// startReplicaServers runs the Runnables of AddReplicaRunnable until the returned
// stop is called. The returned context is ctx, cancelled too when a server
// fails; stop waits for the servers to return and puts the failure in
// *runErr unless it holds an error already.
func (o *Operator) startReplicaServers(ctx context.Context) (context.Context, func(runErr *error)) {
	o.mu.Lock()
	rs := o.replicaRunnables
	o.mu.Unlock()
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
			err := o.runServer(serveCtx, r)
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
func (o *Operator) runServer(ctx context.Context, r Runnable) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return r.Run(ctx)
}
