package runtime

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// observeWatch reports the informer's watch failures (WatchFailed), in
// place of client-go's logging of them;
// Operator.startCaches reports WatchStarted once every cache synced.
func observeWatch(inf cache.SharedIndexInformer, op *Operator, w telemetry.Watch) error {
	return inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		// Logged (at a bounded rate) by the operator's telemetry logger,
		// not again by client-go's default handler.
		op.relists.failed(w, err)
		op.emit(telemetry.WatchFailed{Watch: w, Err: err})
	})
}

// watchesStarted emits WatchStarted for each of the controller's
// informers, in namespace order.
func (c *Controller[T]) watchesStarted() {
	infs := c.informers()
	c.started.Store(&infs)
	for _, ns := range slices.Sorted(maps.Keys(c.caches)) {
		c.op.emit(telemetry.WatchStarted{Watch: telemetry.Watch{Controller: c.name, GVK: c.kind.GVK, Namespace: ns}})
	}
}

// listObserver wraps a ListWatch and reports every list after the first
// as WatchRelisted: a plain list, or a watch that streams the initial
// objects (client-go's watch-list).
type listObserver struct {
	lw    *cache.ListWatch
	op    *Operator
	w     telemetry.Watch
	lists atomic.Int64
	// selector, when set, is added to every list and watch: a sharded
	// member's share (shard.go).
	selector string
}

var _ cache.ListerWatcherWithContext = (*listObserver)(nil)

func observeLists(lw *cache.ListWatch, op *Operator, w telemetry.Watch) *listObserver {
	return &listObserver{lw: lw, op: op, w: w}
}

func (l *listObserver) listed() {
	if l.lists.Add(1) > 1 {
		l.op.emit(telemetry.WatchRelisted{Watch: l.w})
	}
}

// selected adds the observer's label selector to opts.
func (l *listObserver) selected(opts metav1.ListOptions) metav1.ListOptions {
	if l.selector != "" {
		if opts.LabelSelector == "" {
			opts.LabelSelector = l.selector
		} else {
			opts.LabelSelector += "," + l.selector
		}
	}
	return opts
}

func (l *listObserver) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	opts = l.selected(opts)
	obj, err := l.lw.ListWithContext(ctx, opts)
	if err == nil {
		l.chunk(obj)
		if opts.Continue == "" { // the first page of a list, not each page
			l.listed()
		}
	}
	return obj, err
}

func (l *listObserver) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts = l.selected(opts)
	w, err := l.lw.WatchWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	var initial func(n int)
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		l.listed()
		// A watch-list streams the list as events: its one chunk is
		// everything before the initial-events-end bookmark.
		initial = func(n int) {
			l.op.relists.listed(l.w)
			l.op.emit(telemetry.WatchChunkReceived{Watch: l.w, Objects: n})
		}
	}
	ended := l.observeStream(ctx, opts)
	o := newErrorObserver(w, func(err error) {
		if ctx.Err() == nil { // a stream cut because the informer stops is no failure
			l.op.relists.failed(l.w, err)
			l.op.emit(telemetry.WatchFailed{Watch: l.w, Err: err})
		}
	}, ended)
	o.initial = initial
	go o.forward()
	return o, nil
}

// errorObserver passes a watch's events on and reports its error events:
// a watch that breaks mid-stream (a dropped connection, an expired
// resource version) ends with one, and client-go then lists again without
// calling the informer's watch error handler.
type errorObserver struct {
	w       watch.Interface
	out     chan watch.Event
	stop    chan struct{}
	stopped sync.Once
	report  func(error)
	ended   func(failed bool)
	// initial, when set, is called once with the number of objects the
	// stream sent before its initial-events-end bookmark.
	initial func(n int)
}

// newErrorObserver returns the observer of w; the caller starts its
// forward loop.
func newErrorObserver(w watch.Interface, report func(error), ended func(failed bool)) *errorObserver {
	return &errorObserver{w: w, out: make(chan watch.Event), stop: make(chan struct{}), report: report, ended: ended}
}

func (o *errorObserver) forward() {
	failed := false
	defer func() { o.ended(failed) }()
	defer close(o.out)
	added := 0
	for ev := range o.w.ResultChan() {
		switch ev.Type {
		case watch.Error:
			failed = true
			select {
			case <-o.stop: // cut by Stop: nobody is watching any more
			default:
				o.report(apierrors.FromObject(ev.Object))
			}
		case watch.Added:
			added++
		case watch.Bookmark:
			if o.initial != nil && initialEventsEnd(ev.Object) {
				o.initial(added)
				o.initial = nil
			}
		}
		select {
		case o.out <- ev:
		case <-o.stop:
			return
		}
	}
}

// initialEventsEnd reports whether obj is the bookmark that ends a
// watch-list's initial events.
func initialEventsEnd(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	return err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}

func (o *errorObserver) ResultChan() <-chan watch.Event { return o.out }

func (o *errorObserver) Stop() {
	o.stopped.Do(func() { close(o.stop) })
	o.w.Stop()
}

// List and Watch complete cache.ListerWatcher, which the informer
// constructor takes; client-go calls the context variants.
func (l *listObserver) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

func (l *listObserver) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

// newObject returns a new, empty T (T is a pointer to a struct).
func newObject[T apis.Object]() T {
	return reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
}

// observeStream reports how a watch stream ends: WatchStopped when its
// informer stopped (ctx ended), WatchTimedOut when it lasted the timeout
// client-go asked for, WatchFinished when the server ended it early.
// Streams that end with an error event are reported as WatchFailed by
// errorObserver and not again here.
func (l *listObserver) observeStream(ctx context.Context, opts metav1.ListOptions) func(failed bool) {
	l.op.emit(telemetry.WatchOpened{Watch: l.w})
	start := time.Now()
	return func(failed bool) {
		switch d := time.Since(start); {
		case ctx.Err() != nil:
			l.op.emit(telemetry.WatchStopped{Watch: l.w})
		case failed:
		case opts.TimeoutSeconds != nil && d >= time.Duration(*opts.TimeoutSeconds)*time.Second:
			l.op.emit(telemetry.WatchTimedOut{Watch: l.w, Timeout: time.Duration(*opts.TimeoutSeconds) * time.Second})
		default:
			l.op.emit(telemetry.WatchFinished{Watch: l.w, Duration: d})
		}
	}
}

// chunk reports one page of a list.
func (l *listObserver) chunk(obj runtime.Object) {
	n := meta.LenList(obj)
	more := false
	if lm, err := meta.ListAccessor(obj); err == nil {
		more = lm.GetContinue() != ""
	}
	if !more {
		l.op.relists.listed(l.w)
	}
	l.op.emit(telemetry.WatchChunkReceived{Watch: l.w, Objects: n, More: more})
}
