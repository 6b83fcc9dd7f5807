package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/cachefill"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/preview"
)

// PreviewOptions configure a preview: Run handles every object of every
// controller once, over the live cluster, with every write the operator
// makes (applies of status and owned objects, finalizers, deletes, the
// plug.*Now calls, Events) sent to the API server as a dry run, which runs
// admission, defaulting and validation and stores nothing. It prints what
// would change, per object and field, and returns an error wrapping
// ErrPreviewChanges when anything would (Main exits with status 1 then),
// nil when nothing would. docs/runtime.md ("Previewing an upgrade") shows
// it in a CI job.
//
// A preview is a flag of the operator's binary, not a command of opgen:
// only the binary holds its handlers, so a command would have to build and
// run it anyway, and the binary run with --preview needs nothing but the
// operator's kubeconfig and RBAC.
//
// In a preview the operator does not elect a leader (a Lease would be a
// write) and acts as the leader; it serves no metrics, probes or webhooks,
// runs no Runnable (storage migrations included) and no sharding. Each
// key is handled at most once: what an action asks for next (a requeue,
// a retry, the action more that plug.CreateNow and a finalizer added
// first call for) is not run.
type PreviewOptions struct {
	// Enabled runs a preview (--preview). Default false.
	Enabled bool
	// Format of the report: "yaml" (the default) or "json", a document for
	// tools (--preview-format).
	Format string
	// Output receives the report. Default os.Stdout.
	Output io.Writer
}

// ErrPreviewChanges is wrapped by the error Run returns when its preview
// found writes that would change what the API server stores, or Events
// that would be emitted.
var ErrPreviewChanges = errors.New("the preview found changes")

// ErrPreviewFailed is wrapped by the error Run returns when actions of its
// preview failed: what they would have written after the failure is not
// known.
var ErrPreviewFailed = errors.New("actions failed in the preview")

// errPreviewStopped is Run's error when its context ended before the
// preview was done: an exit status of 0 would say that nothing would
// change.
var errPreviewStopped = errors.New("runtime: the preview was stopped before it handled every object")

// complete returns o set up for a preview, when p enables one.
func (p PreviewOptions) complete(o Options) (Options, error) {
	if !p.Enabled {
		return o, nil
	}
	p.Format = orDefault(p.Format, "yaml")
	if p.Format != "yaml" && p.Format != "json" {
		return o, fmt.Errorf("runtime.New: Options.Preview.Format (--preview-format) is %q; use \"yaml\" or \"json\"", p.Format)
	}
	if p.Output == nil {
		p.Output = os.Stdout
	}
	o.Preview = p
	o.LeaderElection.Disabled, o.LeaderElection.Elected = true, nil
	o.Sharding = false
	o.MetricsAddr, o.HealthAddr, o.PprofAddr, o.Webhook.Addr = "0", "0", "", "0"
	return o, nil
}

// previewEvery is how often a preview checks whether it is done.
const previewEvery = 10 * time.Millisecond

// runPreview runs the controllers until each handled every object once,
// then prints the report.
func (o *Operator) runPreview(ctx context.Context) error {
	start := time.Now()
	liveCtx, stopLive := context.WithCancel(cachefill.Fill(ctx))
	defer stopLive()
	o.preview.ReadFrom(previewLive(liveCtx, o.kube.Dynamic, o.plan.controllers, o.caches, o.opts.Name))
	workCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		o.workOn(workCtx, o.plan.controllers, nil, true)
	}()
	t := time.NewTicker(previewEvery)
	defer t.Stop()
	for !previewDone(o.plan.controllers) {
		select {
		case <-ctx.Done():
			stop()
			<-done
			return errPreviewStopped
		case <-t.C:
		}
	}
	stop()
	<-done
	report := o.preview.Report()
	o.log.Info("preview done", "took", time.Since(start).Round(time.Millisecond), "summary", report.Summary.Text)
	if err := report.Write(o.opts.Preview.Output, o.opts.Preview.Format); err != nil {
		return fmt.Errorf("runtime: print the preview: %w", err)
	}
	var errs []error
	if report.Changed() {
		errs = append(errs, fmt.Errorf("runtime: %w: %s", ErrPreviewChanges, report.Summary.Text))
	}
	if n := len(report.Failures); n > 0 {
		errs = append(errs, fmt.Errorf("runtime: %w: %d of them", ErrPreviewFailed, n))
	}
	return errors.Join(errs...)
}

// previewLiveWait bounds how long a write waits for the cache of live
// objects to fill: past it, a write to an object it does not hold yet is
// diffed against a GET.
const previewLiveWait = 30 * time.Second

// previewLive returns the cache the preview diffs writes against (see
// preview.Live), filled until ctx ends: the objects of the controllers'
// kinds, and those of the owned kinds (in caches) that carry the managed-by
// label of the operator named manager.
func previewLive(ctx context.Context, dyn dynamic.Interface, controllers []runner, caches *sharedCaches, manager string) *preview.Live {
	live := preview.NewLive(dyn)
	for _, c := range controllers {
		if c, ok := c.(interface{ previewWatch(*preview.Live) }); ok {
			c.previewWatch(live)
		}
	}
	for _, kc := range caches.kinds {
		for ns := range kc.informers {
			live.Watch(kc.gvr, ns, plug.ManagedByLabelKey+"="+manager)
		}
	}
	live.Start(ctx, previewLiveWait)
	return live
}

// previewWatch has l cache the objects of c's kind where c's informers
// cache them.
func (c *Controller[T]) previewWatch(l *preview.Live) {
	for ns := range c.objects.caches {
		l.Watch(c.kind.GVR(), ns, "")
	}
}

// previewDone reports whether every controller handled each of its
// objects and has nothing queued or in flight.
func previewDone(controllers []runner) bool {
	for _, c := range controllers {
		if !c.previewDone() {
			return false
		}
	}
	return true
}

// previewKeys are the keys a controller handled in a preview: each once.
type previewKeys struct {
	mu      sync.Mutex
	handled map[cache.ObjectName]bool
	active  int
}

// begin reports whether key is to be handled: it was not yet. end must
// follow a true.
func (p *previewKeys) begin(key cache.ObjectName) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.handled[key] {
		return false
	}
	p.handled[key] = true
	p.active++
	return true
}

func (p *previewKeys) end() {
	p.mu.Lock()
	p.active--
	p.mu.Unlock()
}

// previewDone reports whether c handled every cached object, and has
// nothing queued and no action running.
func (c *Controller[T]) previewDone() bool {
	if c.queue.Len() > 0 {
		return false
	}
	p := c.preview
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active > 0 {
		return false
	}
	for _, inf := range c.objects.caches {
		for _, k := range inf.GetStore().ListKeys() {
			key, err := cache.ParseObjectName(k)
			if err == nil && !p.handled[key] {
				return false
			}
		}
	}
	return true
}

// previewFailed records a failed action of a preview.
func (c *Controller[T]) previewFailed(key cache.ObjectName, what string, err error) {
	if c.preview != nil {
		c.op.preview.Failed(fmt.Sprintf("%s %s %s", c.name, what, key), err)
	}
}
