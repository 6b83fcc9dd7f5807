package observe

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// Lists wraps a ListWatch and reports its lists and watches: every list
// after the first as WatchRelisted (a plain list, or a watch that streams
// the initial objects, client-go's watch-list), every page and stream as
// WatchChunkReceived, and how each watch ends.
type Lists struct {
	lw      *cache.ListWatch
	emit    func(telemetry.Event)
	relists Relister
	w       telemetry.Watch
	lists   atomic.Int64
	// Selector, when set, is added to every list and watch as a label
	// selector, ShardSelector as the API server's shard selector: a
	// sharded member's share.
	Selector, ShardSelector string
	// Transform, when set, is applied to each object where it arrives:
	// to each item of a list's page before the next page is asked for,
	// and to each watch event's object on the way to the informer, which
	// then needs no transform of its own. It must change the object in
	// place. A cache that fills this way never holds a page of objects
	// untransformed (with their managedFields, their strings not shared).
	Transform cache.TransformFunc
}

// Relister is told which watches expired and when their list is whole
// again (outage.Relists).
type Relister interface {
	Failed(w telemetry.Watch, err error)
	Listed(w telemetry.Watch)
}

var _ cache.ListerWatcherWithContext = (*Lists)(nil)

// ObserveLists returns lw, observed as watch w, reporting to emit and
// relists.
func ObserveLists(lw *cache.ListWatch, w telemetry.Watch, emit func(telemetry.Event), relists Relister) *Lists {
	return &Lists{lw: lw, emit: emit, relists: relists, w: w}
}

func (l *Lists) listed() {
	if l.lists.Add(1) > 1 {
		l.emit(telemetry.WatchRelisted{Watch: l.w})
	}
}

// selected adds the observer's label selector to opts.
func (l *Lists) selected(opts metav1.ListOptions) metav1.ListOptions {
	if l.Selector != "" {
		if opts.LabelSelector == "" {
			opts.LabelSelector = l.Selector
		} else {
			opts.LabelSelector += "," + l.Selector
		}
	}
	if l.ShardSelector != "" {
		opts.ShardSelector = l.ShardSelector
	}
	return opts
}

func (l *Lists) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	opts = l.selected(opts)
	obj, err := l.lw.ListWithContext(ctx, opts)
	if err == nil && l.Transform != nil {
		err = meta.EachListItem(obj, func(item runtime.Object) error {
			_, err := l.Transform(item)
			return err
		})
	}
	if err == nil {
		l.chunk(obj)
		if opts.Continue == "" { // the first page of a list, not each page
			l.listed()
		}
	}
	return obj, err
}

func (l *Lists) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
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
			l.relists.Listed(l.w)
			l.emit(telemetry.WatchChunkReceived{Watch: l.w, Objects: n})
		}
	}
	ended := l.observeStream(ctx, opts)
	o := newErrorObserver(w, func(err error) {
		if ctx.Err() == nil { // a stream cut because the informer stops is no failure
			l.relists.Failed(l.w, err)
			l.emit(telemetry.WatchFailed{Watch: l.w, Err: err})
		}
	}, ended)
	o.initial, o.transform = initial, l.Transform
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
	// transform, when set, is applied to the object of each event but
	// errors and bookmarks.
	transform cache.TransformFunc
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
		if o.transform != nil && ev.Type != watch.Error && ev.Type != watch.Bookmark {
			if obj, err := o.transform(ev.Object); err == nil {
				ev.Object = obj.(runtime.Object)
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
func (l *Lists) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

func (l *Lists) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

// observeStream reports how a watch stream ends: WatchStopped when its
// informer stopped (ctx ended), WatchTimedOut when it lasted the timeout
// client-go asked for, WatchFinished when the server ended it early.
// Streams that end with an error event are reported as WatchFailed by
// errorObserver and not again here.
func (l *Lists) observeStream(ctx context.Context, opts metav1.ListOptions) func(failed bool) {
	l.emit(telemetry.WatchOpened{Watch: l.w})
	start := time.Now()
	return func(failed bool) {
		switch d := time.Since(start); {
		case ctx.Err() != nil:
			l.emit(telemetry.WatchStopped{Watch: l.w})
		case failed:
		case opts.TimeoutSeconds != nil && d >= time.Duration(*opts.TimeoutSeconds)*time.Second:
			l.emit(telemetry.WatchTimedOut{Watch: l.w, Timeout: time.Duration(*opts.TimeoutSeconds) * time.Second})
		default:
			l.emit(telemetry.WatchFinished{Watch: l.w, Duration: d})
		}
	}
}

// chunk reports one page of a list.
func (l *Lists) chunk(obj runtime.Object) {
	n := meta.LenList(obj)
	more := false
	if lm, err := meta.ListAccessor(obj); err == nil {
		more = lm.GetContinue() != ""
	}
	if !more {
		l.relists.Listed(l.w)
	}
	l.emit(telemetry.WatchChunkReceived{Watch: l.w, Objects: n, More: more})
}
