package runtime

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Run runs the operator until ctx is cancelled (graceful shutdown) or
// leadership is lost. In order, it:
//
//  1. serves /metrics, /healthz and /readyz;
//  2. starts every informer (the controllers', the owned kinds', the shared
//     client-go factories') and waits until they synced: /readyz turns
//     ready;
//  3. campaigns for the lease (unless election is off) while the caches
//     stay warm and the queues fill, and starts the workers when it wins;
//  4. when ctx is cancelled: stops taking new keys, lets in-flight handlers
//     finish for up to Options.ShutdownTimeout (then cancels their
//     contexts), releases the lease, stops the informers and servers.
//
// It returns nil after a graceful shutdown, ErrLostLeadership when the lease
// could not be renewed (the workers were stopped at once), or the error
// that kept it from starting. Run may be called once.
func (o *Operator) Run(ctx context.Context) error {
	if err := o.markStarted(); err != nil {
		return err
	}
	srv, err := o.startServers(o.ready.Load)
	o.mu.Lock()
	o.servers = srv
	o.mu.Unlock()
	close(o.serving)
	defer srv.stop()
	if err != nil {
		return err
	}
	if err := o.broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		return fmt.Errorf("runtime: start the event recorder: %w", err)
	}
	defer o.broadcaster.Shutdown()
	informerCtx, stopInformers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopInformers()
	if err := o.startCaches(ctx, informerCtx); err != nil {
		return err
	}
	o.ready.Store(true)
	o.log.Info("caches synced", "controllers", len(o.controllers), "namespaces", o.opts.Namespaces)
	if o.opts.LeaderElection.Disabled {
		o.work(ctx)
		return nil
	}
	el := newElector(o.clientset.CoordinationV1(), o.opts.LeaderElection, o.opts.Clock, o.log)
	return el.run(ctx, o.work)
}

func (o *Operator) markStarted() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.started {
		return errors.New("runtime: Operator.Run was called twice; make a new Operator to run again")
	}
	o.started = true
	return nil
}

// startCaches starts the shared factories, sets the controllers up, starts
// their informers and waits for all of them to sync.
func (o *Operator) startCaches(ctx, informerCtx context.Context) error {
	o.mu.Lock()
	factories := make(map[string]syncer, len(o.factories))
	for ns, f := range o.factories {
		f.Start(informerCtx.Done())
		factories[ns] = f
	}
	o.mu.Unlock()
	for ns, f := range factories {
		o.caches.full[ns] = fullKinds(f.WaitForCacheSync(ctx.Done()))
	}
	var all []cache.SharedIndexInformer
	for _, c := range o.controllers {
		if err := c.setup(ctx); err != nil {
			return err
		}
		all = append(all, c.informers()...)
	}
	for _, inf := range uniqueInformers(append(all, o.caches.created...)) {
		go inf.RunWithContext(informerCtx)
	}
	all = append(all, o.caches.all...)
	syncs := make([]cache.InformerSynced, len(all))
	for i, inf := range all {
		syncs[i] = inf.HasSynced
	}
	if !cache.WaitForCacheSync(ctx.Done(), syncs...) {
		if ctx.Err() != nil {
			return nil
		}
		return errors.New("runtime: caches did not sync; check the operator's RBAC (list and watch on every controlled and owned kind) and the API server")
	}
	for _, c := range o.controllers {
		c.watchesStarted()
	}
	return nil
}

type syncer interface {
	WaitForCacheSync(stop <-chan struct{}) map[reflect.Type]bool
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

// work runs every controller's workers until leadCtx ends. When it ends
// because ctx was cancelled, in-flight handlers get ShutdownTimeout to
// finish; when leadership was lost, their contexts are cancelled at once.
func (o *Operator) work(leadCtx context.Context) {
	handlerCtx, cancelHandlers := context.WithCancel(context.WithoutCancel(leadCtx))
	defer cancelHandlers()
	o.leading.Store(true)
	o.emit(telemetry.LeaderAcquired{Leadership: o.leadership()})
	var wg sync.WaitGroup
	for _, c := range o.controllers {
		wg.Go(func() { c.work(leadCtx, handlerCtx) })
	}
	for _, r := range o.runnables {
		wg.Go(func() { o.runRunnable(leadCtx, r) })
	}
	<-leadCtx.Done()
	o.leading.Store(false)
	lost := errors.Is(context.Cause(leadCtx), ErrLostLeadership)
	o.emit(telemetry.LeaderLost{Leadership: o.leadership(), Graceful: !lost})
	if lost {
		cancelHandlers()
	} else {
		o.log.Info("shutting down: waiting for in-flight handlers", "timeout", o.opts.ShutdownTimeout)
		t := time.AfterFunc(o.opts.ShutdownTimeout, cancelHandlers)
		defer t.Stop()
	}
	wg.Wait()
}
