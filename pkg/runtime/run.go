package runtime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/cachefill"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/clients"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/serving"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Run runs the operator until ctx is cancelled (graceful shutdown) or
// leadership is lost. In order, it:
//
//  1. serves /metrics, /healthz and /readyz;
//  2. starts every informer (the controllers', the owned kinds', the shared
//     client-go factories') and waits until they synced: /readyz turns
//     ready. An owned or watched kind the API server does not serve (its
//     CRD is not installed) is logged with the fix and retried with a
//     backoff of up to 30s until it is;
//  3. meanwhile campaigns for the lease (unless election is off), and
//     starts the workers once it won and the caches synced (or, with
//     LeaderElectionOptions.Elected, once the caches synced and its host
//     is elected; with sharding, once the caches synced and it joined);
//  4. when ctx is cancelled: stops taking new keys, lets in-flight handlers
//     finish for up to Options.ShutdownTimeout (then cancels their
//     contexts), releases the lease, stops the informers and servers.
//     Handlers that ignore their cancelled context are waited for two
//     seconds more, then logged by key and left behind: Run returns, the
//     lease is no longer renewed and, as they may still write, not
//     released either (a standby takes over when it expires).
//
// It returns nil after a graceful shutdown, ErrLostLeadership when the lease
// could not be renewed (the workers were stopped at once), or the error
// that kept it from starting. With Options.Preview it runs a preview in
// place of steps 3 and 4, and returns when every object was handled once
// (see PreviewOptions). Run may be called once.
func (o *Operator) Run(ctx context.Context) (err error) {
	if err := o.plan.start(); err != nil {
		return err
	}
	// Last: the connections go with the operator (a fleet disengages a
	// cluster so).
	defer utilnet.CloseIdleConnectionsFor(o.httpClient.Transport)
	defer utilnet.CloseIdleConnectionsFor(o.kube.LeaseHTTP.Transport)
	// Servers of every replica (AddReplicaRunnable, the webhook server) run from
	// here until the workers drained.
	o.plan.mu.Lock()
	replicas := o.plan.replica
	o.plan.mu.Unlock()
	if o.preview != nil {
		replicas = nil // the webhook server would register and serve webhooks
	}
	ctx, stopReplicaServers := serving.StartReplicas(ctx, replicas)
	defer stopReplicaServers(&err)
	srv, err := o.startServers()
	o.servers.Store(srv)
	close(o.serving)
	defer srv.Stop()
	if err != nil {
		return err
	}
	if srv.MetricsAddr() != "" || srv.HealthAddr() != "" {
		o.log.Info("serving", "metrics", srv.MetricsURL(), "health", serving.AddrOrOff(srv.HealthAddr(), "/healthz"), "ready", serving.AddrOrOff(srv.HealthAddr(), "/readyz"))
	}
	if err := o.broadcaster.StartRecordingToSinkWithContext(logr.NewContext(ctx, o.log.WithName("events"))); err != nil {
		return fmt.Errorf("runtime: start the event recorder: %w", err)
	}
	defer o.broadcaster.Shutdown()
	var member *memberRun
	if o.sharding != nil {
		// A member joins before its caches fill: a replica restarting
		// keeps its buckets while the other caches list, instead of the
		// sharder moving them to whoever synced first.
		if err := o.sharding.env.Choose(ctx); err != nil {
			return err
		}
		member = joinSharding(ctx, o)
		defer member.stop()
	}
	informerCtx, stopInformers := context.WithCancel(cachefill.Fill(context.WithoutCancel(ctx)))
	defer stopInformers()
	restorePace := cachefill.Pace()
	defer restorePace()
	if o.preview == nil && !o.opts.LeaderElection.Disabled && member == nil {
		return o.campaignWhileFilling(ctx, informerCtx, restorePace)
	}
	synced, err := o.fill(ctx, informerCtx, restorePace)
	if err != nil {
		return err
	}
	if !synced {
		if o.preview != nil {
			return errPreviewStopped // not "nothing would change"
		}
		return nil // stopped before the caches synced: never ready
	}
	if o.preview != nil {
		return o.runPreview(ctx)
	}
	if o.opts.LeaderElection.Disabled {
		if o.opts.LeaderElection.waitElected(ctx, o.log) {
			o.work(ctx)
		}
		return nil
	}
	return member.lead(ctx, o) // the rest campaigned while filling
}

// fill starts the caches and waits until they synced; then the operator
// is ready. synced is false when ctx ended first.
func (o *Operator) fill(ctx, informerCtx context.Context, restorePace func()) (synced bool, err error) {
	if err := o.startCaches(ctx, informerCtx); err != nil {
		return false, err
	}
	// The first pass over the objects runs at the process's own GC
	// target and on all its processors (see cachefill.syncGCPercent and
	// cachefill.fillProcs for why).
	restorePace()
	if ctx.Err() != nil {
		return false, nil
	}
	o.ready.Store(true)
	o.log.Info("caches synced", "controllers", len(o.plan.controllers), "namespaces", o.opts.Namespaces)
	return true, nil
}

// campaignWhileFilling campaigns for the lease while the caches fill, and
// starts the workers once both the lease is won and the caches synced: a
// replica that starts alone works as its last cache syncs, not a Lease
// round trip or two later (a Get and a Create, 20 to 80 ms on a busy
// server). A lease lost while the caches fill stops the fill; a fill
// that fails releases the lease.
func (o *Operator) campaignWhileFilling(ctx, informerCtx context.Context, restorePace func()) error {
	fillCtx, stopFill := context.WithCancel(ctx)
	defer stopFill()
	electCtx, stopElect := context.WithCancel(ctx)
	defer stopElect()
	synced := make(chan struct{})
	campaign := make(chan error, 1)
	elector := o.opts.LeaderElection.elector(o.kube.Leases, o.opts.Clock, o.fence, o.opts.LeaderElection.LeaseName, "became leader", ErrLostLeadership, o.log)
	go func() {
		err := elector.Run(electCtx, func(leadCtx context.Context) bool {
			select {
			case <-synced:
				return o.work(leadCtx)
			case <-leadCtx.Done():
				return true // no work started
			}
		})
		stopFill() // the lease is lost or ctx ended: the fill has no use
		campaign <- err
	}()
	ok, err := o.fill(fillCtx, informerCtx, restorePace)
	if err != nil {
		stopElect()
		<-campaign
		return err
	}
	if ok {
		close(synced)
	}
	return <-campaign
}

// startCaches starts the shared factories, sets the controllers up, starts
// their informers and waits for all of them to sync and for their event
// handlers to take every object of the initial lists (sharedCaches.handle).
func (o *Operator) startCaches(ctx, informerCtx context.Context) error {
	o.mu.Lock()
	factories := make(map[string]clients.Factory, len(o.factories))
	for ns, f := range o.factories {
		f.StartWithContext(informerCtx)
		factories[ns] = f
	}
	o.mu.Unlock()
	for ns, f := range factories {
		o.caches.full[ns] = fullKinds(f.WaitForCacheSync(ctx.Done()))
	}
	var all []cache.SharedIndexInformer
	for _, c := range o.plan.controllers {
		if err := o.setupWhenServed(ctx, c); err != nil || ctx.Err() != nil {
			return err
		}
		all = append(all, c.informers()...)
	}
	for _, inf := range uniqueInformers(append(all, o.caches.created...)) {
		go inf.RunWithContext(informerCtx)
	}
	all = append(all, o.caches.all...)
	synced := make([]cache.DoneChecker, len(all)) // no polling: work starts as the last list ends
	for i, inf := range all {
		synced[i] = inf.HasSyncedChecker()
	}
	synced = append(synced, o.caches.handled...)
	if !cache.WaitFor(ctx, "", synced...) {
		if ctx.Err() != nil {
			return nil
		}
		return errors.New("runtime: caches did not sync; check the operator's RBAC (list and watch on every controlled and owned kind) and the API server")
	}
	for _, c := range o.plan.controllers {
		c.watchesStarted()
	}
	return nil
}

// setupBackoff spaces the attempts to set up a controller whose owned or
// watched kind the API server does not serve.
var setupBackoff = wait.Backoff{Duration: time.Second, Factor: 2, Steps: math.MaxInt32, Cap: 30 * time.Second}

// setupWhenServed sets c up. While one of its owned or watched kinds is not
// served (its CRD is not installed yet), it logs that with the fix and tries
// again with a backoff of up to 30s; the operator is not ready meanwhile.
// It returns nil without setting c up when ctx is cancelled.
func (o *Operator) setupWhenServed(ctx context.Context, c runner) error {
	b := setupBackoff
	for {
		err := c.setup(ctx)
		if err == nil || !meta.IsNoMatchError(err) {
			return err
		}
		next := b.Step()
		o.log.Error(err, "waiting for the API server to serve a kind the operator needs; retrying", "retryIn", next)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(next):
		}
		o.mapper.Reset() // rediscover: the CRD may be installed now
	}
}

// fullKinds returns the kinds whose full informers a factory started.
func fullKinds(types map[reflect.Type]bool) map[schema.GroupVersionKind]bool {
	out := map[schema.GroupVersionKind]bool{}
	for t := range types {
		if t.Kind() != reflect.Pointer {
			continue
		}
		obj, ok := reflect.New(t.Elem()).Interface().(runtime.Object)
		if !ok {
			continue
		}
		if gvks, _, err := scheme.Scheme.ObjectKinds(obj); err == nil {
			for _, gvk := range gvks {
				out[gvk] = true
			}
		}
	}
	return out
}

func uniqueInformers(in []cache.SharedIndexInformer) []cache.SharedIndexInformer {
	seen := map[cache.SharedIndexInformer]bool{}
	var out []cache.SharedIndexInformer
	for _, inf := range in {
		if !seen[inf] {
			seen[inf] = true
			out = append(out, inf)
		}
	}
	return out
}

// cancelGrace is how long work waits, after cancelling the handlers'
// contexts, for them to return before it leaves them behind.
const cancelGrace = 2 * time.Second

// work runs every controller's workers until leadCtx ends. When it ends
// because ctx was cancelled, in-flight handlers get ShutdownTimeout to
// finish; when leadership was lost, their contexts are cancelled at once.
// Handlers and Runnables that still run cancelGrace after their contexts
// were cancelled are logged by key and left behind: work returns false
// then (not drained), true when everything returned.
func (o *Operator) work(leadCtx context.Context) (drained bool) {
	return o.workOn(leadCtx, o.plan.controllers, o.leaderRunnables(), true)
}

// workOn is work for some controllers and Runnables; leading tells
// whether the context is the leader's (reported as leadership) or a
// sharded member's.
func (o *Operator) workOn(leadCtx context.Context, controllers []runner, runnables []Runnable, leading bool) (drained bool) {
	handlerCtx, cancelHandlers := context.WithCancel(context.WithoutCancel(leadCtx))
	defer cancelHandlers()
	if leading {
		o.leading.Store(true)
		o.bus.Emit(telemetry.LeaderAcquired{Leadership: o.opts.LeaderElection.leadership()})
	}
	var wg sync.WaitGroup
	for _, c := range controllers {
		wg.Go(func() { c.work(leadCtx, handlerCtx) })
	}
	for _, r := range runnables {
		wg.Go(func() {
			defer o.inflight.End(o.inflight.Begin("runnable", cache.ObjectName{Name: fmt.Sprintf("%T", r)}))
			runRunnable(leadCtx, o.log, r)
		})
	}
	<-leadCtx.Done()
	lost := errors.Is(context.Cause(leadCtx), ErrLostLeadership) || errors.Is(context.Cause(leadCtx), ErrLostMembership)
	if leading {
		o.leading.Store(false)
		o.bus.Emit(telemetry.LeaderLost{Leadership: o.opts.LeaderElection.leadership(), Graceful: !lost})
	}
	wait := cancelGrace
	if lost {
		cancelHandlers()
	} else {
		o.log.Info("shutting down: waiting for in-flight handlers", "timeout", o.opts.ShutdownTimeout, "inFlight", o.inflight.List())
		t := time.AfterFunc(o.opts.ShutdownTimeout, cancelHandlers)
		defer t.Stop()
		wait += o.opts.ShutdownTimeout
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		o.log.Error(errors.New("handlers ignored their cancelled context"), "shutting down without waiting for them: they may still write until the process exits; the lease is not released, it expires",
			"stuck", o.inflight.List(), "waited", wait)
		return false
	}
}
