package runtime

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/inflight"
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
	defer c.queue.Finished(key, false) // after act's own call, on every path: lanes forget the key
	if leadCtx.Err() != nil {
		return false // shutting down: take no new work
	}
	defer c.op.inflight.End(c.op.inflight.Begin(c.name, key))
	c.handle(ctx, key, c.queue.Triggers(key))
	return true
}

// handle runs the pipeline for key, woken by ts, and decides what happens
// next: forget on success (and requeue after the period or the asked
// delay), backoff on error, nothing on a terminal error. A paused object
// gets no action.
func (c *Controller[T]) handle(ctx context.Context, key cache.ObjectName, ts telemetry.Triggers) {
	if c.preview != nil {
		// A preview handles a key once: what its dry runs echo, and the
		// requeues and retries of its action, are not run.
		if !c.preview.begin(key) {
			c.queue.Forget(key)
			return
		}
		defer c.preview.end()
	}
	if c.turns != nil {
		release, mine := c.turns.take(ctx, key)
		if !mine {
			return
		}
		defer release()
	}
	if last, ok := c.finalizer.goneObject(key); ok {
		c.lateDelete(ctx, key, last, ts)
		return
	}
	obj, ok := c.objects.get(key)
	if ok && c.shard != nil {
		// Sharded: act only while this member holds the object's bucket;
		// a release waits for the action.
		var exit func()
		if exit, ok = c.shard.enter(obj); ok {
			defer exit()
		}
	}
	if !ok {
		c.states.forget(key)
		c.queue.Forget(key)
		c.queue.Gone(key)
		return
	}
	st := c.states.of(key, string(obj.GetUID()))
	if c.finalizeFirst(ctx, key, obj, st) {
		c.queue.Note(key, ts) // the first action's, which follows
		return
	}
	verb, act := c.verb(obj, st)
	if !act {
		c.queue.Forget(key)
		return
	}
	r := telemetry.Reconcile{Controller: c.name, Key: key, Verb: string(verb), ID: strconv.FormatUint(c.reconID.Add(1), 36)}
	log := observe.WithAction(c.log, key.Namespace, key.Name, string(verb), r.ID).WithValues("triggers", ts)
	if IsPaused(obj) {
		c.op.bus.Emit(telemetry.ReconcilePaused{Reconcile: r})
		c.pause.hold(ctx, key, c.newAction(verb, obj, log), st)
		return
	}
	if hotLoopSeen(c.hot, key, obj, &st.loop, r, ts) {
		return
	}
	c.act(ctx, key, c.newAction(verb, obj, log), st, r, ts)
}

// newAction returns an action for verb on obj, in the operator's cluster.
func (c *Controller[T]) newAction(verb plug.Verb, obj T, log logr.Logger) *plug.Action[T] {
	a := plug.NewAction(verb, obj, log)
	a.Cluster = c.op.opts.Cluster
	return a
}

// act runs the pipeline for a, woken by ts, traced and reported, and
// schedules what comes next. It returns the pipeline's error.
func (c *Controller[T]) act(ctx context.Context, key cache.ObjectName, a *plug.Action[T], st *objectState, r telemetry.Reconcile, ts telemetry.Triggers) error {
	a.SetMemory(&st.memory)
	c.finalizer.acting(a, st)
	c.pause.resume(a)
	c.op.bus.Emit(telemetry.ReconcileWoken{Reconcile: r, Triggers: ts})
	c.op.bus.Emit(telemetry.ReconcileStarted{Reconcile: r})
	start, began := time.Now(), c.op.opts.Clock.Now()
	spanCtx, span := observe.StartReconcile(ctx, c.op.tracer, r, ts, st.span)
	err := c.runTimed(spanCtx, a, r)
	st.span = observe.EndSpan(span, err)
	var next time.Duration
	changed := c.owned.changes.Take(a.Object.GetUID())
	c.queue.Finished(key, err != nil && !plug.IsTerminal(err)) // a retry keeps the user lane
	switch {
	case err != nil && c.preview != nil:
		c.previewFailed(key, string(a.Verb), err)
	case err == nil:
		if a.Verb != plug.Delete {
			st.handled, st.known = a.Observed().GetGeneration(), true
			next = c.next(a)
		}
		if !st.loop.hot {
			c.queue.Forget(key) // in a hot loop, the backoff goes on
		}
		if changed != nil {
			// Its own owned objects changed: once more, after this action.
			c.queue.Wake(key, telemetry.Trigger{Kind: telemetry.TriggerEcho, Fields: changed})
		}
		if next > 0 {
			// The delay counts from when the action began (the time the handler
			// saw when it chose it), not from when the pipeline's writes ended.
			c.queue.After(key, next-c.op.opts.Clock.Since(began), c.tick(a, next))
		}
	case plug.IsTerminal(err):
		c.queue.Forget(key)
	default:
		c.queue.Retry(key)
	}
	c.report(r, time.Since(start), next, err) // after the queue knows what comes next
	return err
}

// lateDelete runs the Delete of an object deleted before it had the
// finalizer, retried like any action until it succeeds. A newer object of
// the same name, if the cache holds one, is handled next.
func (c *Controller[T]) lateDelete(ctx context.Context, key cache.ObjectName, last T, ts telemetry.Triggers) {
	r := telemetry.Reconcile{Controller: c.name, Key: key, Verb: string(plug.Delete), ID: strconv.FormatUint(c.reconID.Add(1), 36)}
	log := observe.WithAction(c.log, key.Namespace, key.Name, string(plug.Delete), r.ID).WithValues("triggers", ts)
	log.V(1).Info("deleted before the finalizer was on it: a late Delete with its last state")
	err := c.act(ctx, key, c.newAction(plug.Delete, last, log), &objectState{uid: string(last.GetUID())}, r, ts)
	if err != nil && !plug.IsTerminal(err) {
		return // act queued the retry
	}
	c.finalizer.lateDone(key, last)
	if obj, ok := c.objects.get(key); ok {
		// A newer object of the name.
		c.queue.Note(key, telemetry.Triggers{woken(telemetry.TriggerChange, "", obj, false)})
		c.queue.Add(key)
	}
}

// DefaultActionTimeout is ControllerOptions.ActionTimeout's default: long
// enough for any handler that makes progress, short enough that a wedged
// one does not hold its worker for good unnoticed.
const DefaultActionTimeout = 10 * time.Minute

// runTimed runs the pipeline within the controller's ActionTimeout. It
// reports the deadline when it passes, and again when the action still
// runs a grace period after it. The pipeline's Delegate step turns a
// handler's panic into an error; a panic of another step is one too.
func (c *Controller[T]) runTimed(ctx context.Context, a *plug.Action[T], r telemetry.Reconcile) (err error) {
	defer plug.Recover(a, &err)
	if timeout := c.opts.ActionTimeout; timeout >= 0 {
		var d *inflight.Deadline
		ctx, d = c.op.stuck.Arm(ctx, c.op.bus, c.name, r, timeout)
		defer d.Done()
	}
	return c.pipeline.Run(ctx, a)
}

// tick is the trigger of the action next after d: the handler's
// requeue, or the controller's period.
func (c *Controller[T]) tick(a *plug.Action[T], d time.Duration) telemetry.Trigger {
	if r := a.Requeue(); r > 0 && r == d {
		return telemetry.Trigger{Kind: telemetry.TriggerRequeue}
	}
	return telemetry.Trigger{Kind: telemetry.TriggerPeriodic}
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
		c.op.bus.Emit(telemetry.ReconcileFailed{Reconcile: r, Duration: d, Err: err, Terminal: plug.IsTerminal(err), Unknown: plug.OutcomeUnknown(err)})
		return
	}
	c.op.bus.Emit(telemetry.ReconcileSucceeded{Reconcile: r, Duration: d, RequeueAfter: next})
}

// verb picks the verb for obj from its state, never from the event that
// woke the controller; act is false when there is nothing to do. The rules
// are the package documentation's "Verbs".
func (c *Controller[T]) verb(obj T, st *objectState) (v plug.Verb, act bool) {
	if obj.GetDeletionTimestamp() != nil {
		return plug.Delete, slices.Contains(obj.GetFinalizers(), c.opts.Finalizer)
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

// states are what the controller remembers of the objects it handles.
type states struct {
	mu   sync.Mutex
	m    map[cache.ObjectName]*objectState
	peak int // the most entries m held since it was made
}

// compactBelow is the smallest peak after which m is made again once it
// holds half of it or less: a Go map keeps the room of its peak, and a
// sharded member that let go of half its buckets, or an operator after a
// mass delete, would keep it for good. Half the peak's entries were
// forgotten since the last copy, so the copy costs O(1) a forget.
const compactBelow = 1024

// objectState is what the controller remembers of one object while it
// exists: the generation it last handled successfully in this process and
// the steps' memory.
type objectState struct {
	uid     string
	handled int64
	known   bool
	memory  plug.Memory       // holds no map while no step remembers anything
	loop    loopState         // of the hot-loop detection
	span    trace.SpanContext // of the last action: later triggers link to it
	// finalized: finalizeFirst added the finalizer ahead of the queue and
	// the object's first action has not run yet. Read by the queue
	// (urgent) under its lock.
	finalized atomic.Bool
}

// of returns the object's state, new when the object is new or was
// recreated under the same name.
func (s *states) of(key cache.ObjectName, uid string) *objectState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[key]
	if !ok || st.uid != uid {
		st = &objectState{uid: uid} // memory is allocated by the first step that stores something
		s.m[key] = st
		s.peak = max(s.peak, len(s.m))
	}
	return st
}

// peek returns the object's state, or nil.
func (s *states) peek(key cache.ObjectName) *objectState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[key]
}

func (s *states) forget(key cache.ObjectName) {
	s.mu.Lock()
	delete(s.m, key)
	if s.peak >= compactBelow && len(s.m) <= s.peak/2 {
		m := make(map[cache.ObjectName]*objectState, len(s.m))
		maps.Copy(m, s.m)
		s.m, s.peak = m, len(m)
	}
	s.mu.Unlock()
}
