package runtime

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/observe"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// work runs the workers until leadCtx ends, then shuts the queue down and
// waits for in-flight keys. Handlers run with handlerCtx.
func (c *Controller[T]) work(leadCtx, handlerCtx context.Context) {
	workers := telemetry.Workers{Controller: c.name, Count: c.opts.Workers}
	c.op.bus.Emit(telemetry.ControllerStarted{Workers: workers})
	defer c.op.bus.Emit(telemetry.ControllerStopped{Workers: workers})
	var wg sync.WaitGroup
	for range c.opts.Workers {
		wg.Go(func() {
			for c.processNext(leadCtx, handlerCtx) {
			}
		})
	}
	<-leadCtx.Done()
	c.queue.ShutDown()
	wg.Wait()
}

// processNext handles one key; false means the queue shut down.
func (c *Controller[T]) processNext(leadCtx, ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	defer c.marks.Finished(key, false) // after act's own call, on every path: lanes forget the key
	if leadCtx.Err() != nil {
		return false // shutting down: take no new work
	}
	defer c.op.inflight.End(c.op.inflight.Begin(c.name, key))
	c.handle(ctx, key)
	return true
}

// handle runs the pipeline for key and decides what happens next: forget
// on success (and requeue after the period or the asked delay), backoff on
// error, nothing on a terminal error. A paused object gets no action.
func (c *Controller[T]) handle(ctx context.Context, key cache.ObjectName) {
	if c.dispatch != nil {
		release, mine := (versionTurn[T]{c}).take(ctx, key)
		if !mine {
			return
		}
		defer release()
	}
	if last, ok := c.goneObject(key); ok {
		c.lateDelete(ctx, key, last)
		return
	}
	obj, ok := c.Get(key)
	if !ok {
		c.forget(key)
		c.queue.Forget(key)
		return
	}
	if c.op.member != nil {
		// Sharded: act only while this member holds the object's bucket;
		// a release waits for the action.
		b, ok := c.op.shardKeys.BucketOf(obj)
		if !ok || !c.op.member.Enter(b) {
			c.forget(key)
			c.queue.Forget(key)
			return
		}
		defer c.op.member.Exit(b)
	}
	st := c.state(key, string(obj.GetUID()))
	if (finalizing[T]{c}).finalizeFirst(ctx, key, obj, st) {
		return
	}
	verb, act := c.verb(obj, st)
	if !act {
		c.queue.Forget(key)
		return
	}
	r := telemetry.Reconcile{Controller: c.name, Key: key, Verb: string(verb), ID: strconv.FormatUint(c.reconID.Add(1), 36)}
	log := observe.WithAction(c.log, key.Namespace, key.Name, string(verb), r.ID)
	if IsPaused(obj) {
		(pausing[T]{c}).pause(ctx, key, obj, st, log, r)
		return
	}
	c.act(ctx, key, c.newAction(verb, obj, log), st, r)
}

// newAction returns an action for verb on obj, in the operator's cluster.
func (c *Controller[T]) newAction(verb plug.Verb, obj T, log logr.Logger) *plug.Action[T] {
	a := plug.NewAction(verb, obj, log)
	a.Cluster = c.op.opts.Cluster
	return a
}

// act runs the pipeline for a, traced and reported, and schedules what
// comes next. It returns the pipeline's error.
func (c *Controller[T]) act(ctx context.Context, key cache.ObjectName, a *plug.Action[T], st *objectState, r telemetry.Reconcile) error {
	a.SetMemory(&st.memory)
	if a.Verb == plug.Delete {
		c.mu.Lock()
		c.deleting[a.Object.GetUID()] = struct{}{}
		c.mu.Unlock()
	}
	if st.finalized.Swap(false) && !slices.Contains(a.Object.GetFinalizers(), c.finalizer) {
		// finalizeFirst added it; the cache does not show it yet.
		a.Object.SetFinalizers(append(a.Object.GetFinalizers(), c.finalizer))
	}
	(pausing[T]{c}).resume(a)
	c.op.bus.Emit(telemetry.ReconcileStarted{Reconcile: r})
	start, began := time.Now(), c.op.opts.Clock.Now()
	spanCtx, span := observe.StartReconcile(ctx, c.op.tracer, r)
	err := c.runTimed(spanCtx, a, r)
	observe.EndSpan(span, err)
	var next time.Duration
	changed := c.store.changes.Take(a.Object.GetUID())
	c.marks.Finished(key, err != nil && !plug.IsTerminal(err)) // a retry keeps the user lane
	switch {
	case err == nil:
		if a.Verb != plug.Delete {
			st.handled, st.known = a.Observed().GetGeneration(), true
			next = c.next(a)
		}
		c.queue.Forget(key)
		if changed {
			c.wake(key, true) // its own children changed: once more, after this action
		}
		if next > 0 {
			// The delay counts from when the action began (the time the handler
			// saw when it chose it), not from when the pipeline's writes ended.
			if left := next - c.op.opts.Clock.Since(began); left > 0 {
				c.queue.AddAfter(key, left)
			} else {
				c.queue.Add(key)
			}
		}
	case plug.IsTerminal(err):
		c.queue.Forget(key)
	default:
		c.queue.AddRateLimited(key)
	}
	c.report(r, time.Since(start), next, err) // after the queue knows what comes next
	return err
}

// missedDelete reports whether the watch's deletion of last, an object's
// final state, took away an object that never got the finalizer: the
// object was deleted while its key waited in the queue (under load, or in
// a burst). It then gets one Delete with that state, a late one: a handler
// must not miss the deletion of an object it was told about. Without a
// Delete in the handler, with a custom pipeline (which decides about
// finalizers itself), with controllers per version (which one would act is
// the written version's call, and the object is gone) and for paused
// objects, there is none.
func (c *Controller[T]) missedDelete(last T) bool {
	if !c.deletes || c.opts.Pipeline != nil || c.dispatch != nil || IsPaused(last) || slices.Contains(last.GetFinalizers(), c.finalizer) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ran := c.deleting[last.GetUID()]; ran {
		return false // Delete ran and took the finalizer away
	}
	return true
}

// goneObject returns the last state of an object whose late Delete is due.
func (c *Controller[T]) goneObject(key cache.ObjectName) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	last, ok := c.gone[key]
	return last, ok
}

// lateDelete runs the Delete of an object deleted before it had the
// finalizer, retried like any action until it succeeds. A newer object of
// the same name, if the cache holds one, is handled next.
func (c *Controller[T]) lateDelete(ctx context.Context, key cache.ObjectName, last T) {
	r := telemetry.Reconcile{Controller: c.name, Key: key, Verb: string(plug.Delete), ID: strconv.FormatUint(c.reconID.Add(1), 36)}
	log := observe.WithAction(c.log, key.Namespace, key.Name, string(plug.Delete), r.ID)
	log.V(1).Info("deleted before the finalizer was on it: a late Delete with its last state")
	err := c.act(ctx, key, c.newAction(plug.Delete, last, log), &objectState{uid: string(last.GetUID())}, r)
	if err != nil && !plug.IsTerminal(err) {
		return // act queued the retry
	}
	c.mu.Lock()
	if g, ok := c.gone[key]; ok && g.GetUID() == last.GetUID() {
		delete(c.gone, key)
	}
	delete(c.deleting, last.GetUID())
	c.mu.Unlock()
	if _, ok := c.Get(key); ok {
		c.queue.Add(key)
	}
}

// DefaultActionTimeout is ControllerOptions.ActionTimeout's default: long
// enough for any handler that makes progress, short enough that a wedged
// one does not hold its worker for good unnoticed.
const DefaultActionTimeout = 10 * time.Minute

// runTimed runs the pipeline within the controller's ActionTimeout. It
// reports the deadline when it passes, and again when the action still
// runs a grace period after it.
func (c *Controller[T]) runTimed(ctx context.Context, a *plug.Action[T], r telemetry.Reconcile) error {
	timeout := c.opts.ActionTimeout
	if timeout < 0 {
		return c.run(ctx, a)
	}
	ctx, d := c.op.stuck.Arm(ctx, c.op.bus, c.name, r, timeout)
	defer d.Done()
	return c.run(ctx, a)
}

// run runs the pipeline, turning a panic into an error that is retried.
func (c *Controller[T]) run(ctx context.Context, a *plug.Action[T]) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panicked: %v", r)
			a.Log.Error(err, "recovered a panic", "stack", string(debug.Stack()))
		}
	}()
	return c.pipeline.Run(ctx, a)
}

// next is the delay before the next action on a handled object: the
// earlier of the handler's RequeueAfter and the controller's period.
func (c *Controller[T]) next(a *plug.Action[T]) time.Duration {
	d := c.opts.ReconcileEvery
	if r := a.Requeue(); r > 0 && (d == 0 || r < d) {
		d = r
	}
	return d
}

// report emits the end of an action; the metrics count it from there.
func (c *Controller[T]) report(r telemetry.Reconcile, d, next time.Duration, err error) {
	if err != nil {
		c.op.bus.Emit(telemetry.ReconcileFailed{Reconcile: r, Duration: d, Err: err, Terminal: plug.IsTerminal(err)})
		return
	}
	c.op.bus.Emit(telemetry.ReconcileSucceeded{Reconcile: r, Duration: d, RequeueAfter: next})
}

// state returns the object's state, new when the object is new or was
// recreated under the same name.
func (c *Controller[T]) state(key cache.ObjectName, uid string) *objectState {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.states[key]
	if !ok || st.uid != uid {
		st = &objectState{uid: uid} // memory is allocated by the first step that stores something
		c.states[key] = st
	}
	return st
}

func (c *Controller[T]) forget(key cache.ObjectName) {
	c.mu.Lock()
	delete(c.states, key)
	c.mu.Unlock()
}

// verb picks the verb for obj from its state, never from the event that
// woke the controller; act is false when there is nothing to do. The rules
// are the package documentation's "Verbs".
func (c *Controller[T]) verb(obj T, st *objectState) (v plug.Verb, act bool) {
	if obj.GetDeletionTimestamp() != nil {
		return plug.Delete, slices.Contains(obj.GetFinalizers(), c.finalizer)
	}
	handled, known := lastHandled(obj, st)
	switch {
	case !known:
		return plug.Add, true
	case handled != obj.GetGeneration():
		return plug.Modify, true
	default:
		return plug.Reconcile, true
	}
}

// lastHandled is the generation last handled successfully: this process's
// memory first (it is never older than the status, which the cache may not
// show yet), then status.observedGeneration.
func lastHandled[T apis.Object](obj T, st *objectState) (int64, bool) {
	if st.known {
		return st.handled, true
	}
	if og, ok := any(obj).(apis.ObservedGenerationObject); ok && og.GetObservedGeneration() > 0 {
		return og.GetObservedGeneration(), true
	}
	return 0, false
}
