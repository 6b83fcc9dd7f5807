package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Runnable is work an operator runs beside its controllers, only while it
// leads: periodic tasks (package task) are one. Run starts when this
// replica wins the lease and must return soon after ctx ends, which
// happens when leadership is lost (at once) or at shutdown (the operator
// waits for Run to return). After a handover back to this replica, Run is
// called again.
type Runnable interface {
	Run(ctx context.Context) error
}

// RunnableFunc adapts a function to a Runnable.
type RunnableFunc func(ctx context.Context) error

// Run calls f.
func (f RunnableFunc) Run(ctx context.Context) error { return f(ctx) }

var _ Runnable = RunnableFunc(nil)

// AddLeaderRunnable adds r to the work the leader runs. It must be called before Run.
func (o *Operator) AddLeaderRunnable(r Runnable) error {
	if r == nil {
		return errors.New("runtime: Operator.AddLeaderRunnable: the Runnable is nil")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.started {
		return errors.New("runtime: Operator.AddLeaderRunnable: the operator already runs; add every Runnable before Run")
	}
	o.runnables = append(o.runnables, r)
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
