package observe

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/opgen-sdk/opgen/pkg/telemetry"
)

// TestWatchEndIsClassified: a watch stream that ends is reported by how
// it ended: WatchStopped when its informer stopped, WatchTimedOut when it
// lasted the timeout client-go asked for, WatchFinished when the server
// ended it early, and only WatchFailed after an error event. Every stream
// is first a WatchOpened.
func TestWatchEndIsClassified(t *testing.T) {
	for name, tc := range map[string]struct {
		timeout *int64
		cancel  bool
		fail    bool
		want    []string
	}{
		"stopped":   {timeout: ptr.To[int64](3600), cancel: true, want: []string{"watch.opened", "watch.stopped"}},
		"timed out": {timeout: ptr.To[int64](0), want: []string{"watch.opened", "watch.timedout"}},
		"finished":  {timeout: ptr.To[int64](3600), want: []string{"watch.opened", "watch.finished"}},
		"failed":    {timeout: ptr.To[int64](3600), fail: true, want: []string{"watch.opened", "watch.failed"}},
	} {
		t.Run(name, func(t *testing.T) {
			var got []string
			done := make(chan struct{})
			var ended sync.Once
			emit := func(e telemetry.Event) {
				got = append(got, e.Name())
				switch e.(type) {
				case telemetry.WatchStopped, telemetry.WatchTimedOut, telemetry.WatchFinished, telemetry.WatchFailed:
					ended.Do(func() { close(done) })
				}
			}
			fake := watch.NewFake()
			lw := &cache.ListWatch{WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return fake, nil }}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w, err := ObserveLists(lw, telemetry.Watch{Controller: "c"}, emit, noRelists{}).WatchWithContext(ctx, metav1.ListOptions{TimeoutSeconds: tc.timeout})
			require.NoError(t, err)
			go func() {
				for range w.ResultChan() { // what the reflector does
				}
			}()
			if tc.cancel {
				cancel()
			}
			if tc.fail {
				fake.Error(&metav1.Status{Status: metav1.StatusFailure, Reason: metav1.StatusReasonExpired, Code: 410})
			}
			fake.Stop()
			<-done
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestListChunks: each page of a list is a WatchChunkReceived with its
// object count and whether more follow; only the first page of a list
// after the first counts as a relist.
func TestListChunks(t *testing.T) {
	var got []string
	emit := func(e telemetry.Event) {
		switch e := e.(type) {
		case telemetry.WatchChunkReceived:
			got = append(got, fmt.Sprintf("%s %d more=%t", e.Name(), e.Objects, e.More))
		default:
			got = append(got, e.Name())
		}
	}
	lw := &cache.ListWatch{ListWithContextFunc: func(_ context.Context, opts metav1.ListOptions) (kruntime.Object, error) {
		l := &corev1.ConfigMapList{Items: make([]corev1.ConfigMap, 2)}
		if opts.Continue == "" {
			l.Continue = "page-2"
		} else {
			l.Items = l.Items[:1]
		}
		return l, nil
	}}
	lo := ObserveLists(lw, telemetry.Watch{Controller: "c"}, emit, noRelists{})
	for range 2 { // two lists of two pages each
		for _, cont := range []string{"", "page-2"} {
			_, err := lo.ListWithContext(context.Background(), metav1.ListOptions{Continue: cont})
			require.NoError(t, err)
		}
	}
	assert.Equal(t, []string{
		"watch.chunk.received 2 more=true", "watch.chunk.received 1 more=false",
		"watch.chunk.received 2 more=true", "watch.relisted", "watch.chunk.received 1 more=false",
	}, got)
}

// noRelists is a Relister that keeps nothing.
type noRelists struct{}

func (noRelists) Listed(telemetry.Watch)        {}
func (noRelists) Failed(telemetry.Watch, error) {}

// TestTransformWhereObjectsArrive: with a Transform, every listed item
// and the object of every added, modified and deleted event is
// transformed before the informer sees it; bookmarks and errors are not.
func TestTransformWhereObjectsArrive(t *testing.T) {
	t.Parallel()
	mark := func(obj any) (any, error) {
		m := obj.(metav1.Object)
		m.SetLabels(map[string]string{"transformed": m.GetName()})
		return obj, nil
	}
	cm := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	fake := watch.NewFake()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (kruntime.Object, error) {
			return &corev1.ConfigMapList{Items: []corev1.ConfigMap{*cm("a"), *cm("b")}}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return fake, nil },
	}
	l := ObserveLists(lw, telemetry.Watch{Controller: "c"}, func(telemetry.Event) {}, noRelists{})
	l.Transform = mark
	list, err := l.ListWithContext(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	for _, item := range list.(*corev1.ConfigMapList).Items {
		assert.Equal(t, item.Name, item.Labels["transformed"])
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := l.WatchWithContext(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	go func() {
		fake.Add(cm("c"))
		fake.Modify(cm("d"))
		fake.Action(watch.Bookmark, cm("e"))
		fake.Delete(cm("f"))
		fake.Error(&metav1.Status{Message: "gone"})
	}()
	for _, want := range []string{"c", "d", "", "f"} {
		ev := <-w.ResultChan()
		assert.Equal(t, want, ev.Object.(metav1.Object).GetLabels()["transformed"], ev.Type)
	}
	ev := <-w.ResultChan()
	assert.Equal(t, watch.Error, ev.Type)
	assert.Equal(t, "gone", ev.Object.(*metav1.Status).Message)
}
