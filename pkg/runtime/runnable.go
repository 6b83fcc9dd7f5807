package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
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
	return o.plan.addRunnable(&o.plan.leader, "AddLeaderRunnable", r)
}

// AddReplicaRunnable adds r to the work every replica runs, leader or not:
// the webhook server is one, as the API server calls any replica behind
// the webhook Service. r runs once per Run. It starts before the caches
// sync, as a conversion webhook must answer the informers' lists. Its
// context ends only after the workers drained at shutdown, so that their
// last writes are still admitted. An error r returns before then stops
// the operator: Run returns it. It must be called before Run.
func (o *Operator) AddReplicaRunnable(r Runnable) error {
	return o.plan.addRunnable(&o.plan.replica, "AddReplicaRunnable", r)
}

// plan is what Run runs: the controllers, the leader's Runnables and
// every replica's, added before Run and fixed once it starts.
type plan struct {
	mu              sync.Mutex
	started         bool
	controllers     []runner
	leader, replica []Runnable
}

// start fixes the plan: Run may be called once.
func (p *plan) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return errors.New("runtime: Operator.Run was called twice; make a new Operator to run again")
	}
	p.started = true
	return nil
}

// addController adds r, whose name must be the only one.
func (p *plan) addController(r runner) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return fmt.Errorf("runtime.Register: controller %s: the operator already runs; register every controller before Run", r.controllerName())
	}
	for _, c := range p.controllers {
		if c.controllerName() == r.controllerName() {
			return fmt.Errorf("runtime.Register: two controllers are named %q: set ControllerOptions.Name on one", r.controllerName())
		}
	}
	p.controllers = append(p.controllers, r)
	return nil
}

func (p *plan) addRunnable(to *[]Runnable, method string, r Runnable) error {
	if r == nil {
		return fmt.Errorf("runtime: Operator.%s: the Runnable is nil", method)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return fmt.Errorf("runtime: Operator.%s: the operator already runs; add every Runnable before Run", method)
	}
	*to = append(*to, r)
	return nil
}

// leaderRunnables are the Runnables the leader runs: the user's, and the
// storage migration of each custom kind with a controller (migrate.go).
func (o *Operator) leaderRunnables() []Runnable {
	out := append([]Runnable(nil), o.plan.leader...)
	if o.opts.SkipStorageMigration {
		return out
	}
	return append(out, newMigrations(o).runnables(o.plan.controllers)...)
}

// runRunnable runs r, logging an error it returns and a panic.
func runRunnable(ctx context.Context, log logr.Logger, r Runnable) {
	defer func() {
		if p := recover(); p != nil {
			log.Error(fmt.Errorf("panic: %v", p), "a Runnable panicked", "runnable", fmt.Sprintf("%T", r))
		}
	}()
	if err := r.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		log.Error(err, "a Runnable stopped with an error", "runnable", fmt.Sprintf("%T", r))
	}
}
