package runtime_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// TestHandlesTheListAsItArrives: a leader hands each object of its kind's
// first list to the workers as the server streams it. The stream's
// initial-events-end bookmark is held back here until a handler ran, so
// an operator whose workers waited for the whole list would never handle
// anything. Each object is handled once: the informer's later add of an
// object the workers already had wakes nothing, even with an update
// filter that lets every update through. Controller.Get of an object the
// list has not brought waits for the list's end.
func TestHandlesTheListAsItArrives(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	names := []string{"a", "b", "c"}
	for _, name := range names {
		createGadget(t, ns, name, testapi.GadgetSpec{})
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.DisableCompression = true // the bookmark is found in the stream's bytes
	release := make(chan struct{})
	cfg.Wrap(holdInitialEventsEnd("gadgets", release))
	h := newOperator(t, ns, cfg, runtime.Options{})

	var (
		once         sync.Once
		readyAtFirst atomic.Bool
		ctrl         *runtime.Controller[*testapi.Gadget]
		missing      = make(chan bool, 1)
	)
	c := &calls{}
	hd := &handler{calls: c, fn: func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
		once.Do(func() {
			readyAtFirst.Store(h.op.Ready())
			close(release)
			_, found := ctrl.Get(cache.ObjectName{Namespace: ns, Name: "not-listed"})
			missing <- found
		})
		return nil
	}}
	var err error
	ctrl, err = runtime.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](hd), runtime.ControllerOptions[*testapi.Gadget]{
		UpdateFilter: func(_, _ *testapi.Gadget) bool { return true },
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.op.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})

	select {
	case <-release:
	case <-time.After(30 * time.Second):
		t.Fatal("waited 30s for a handler to run while the end of the list was held back: the workers wait for the whole list")
	}
	assert.False(t, readyAtFirst.Load(), "the first handler ran before the caches synced")
	select {
	case found := <-missing:
		assert.False(t, found, "an object the list did not bring")
		assert.True(t, h.op.Ready(), "Get waited for the end of the list")
	case <-time.After(30 * time.Second):
		t.Fatal("waited 30s for Get of an unlisted object to return once the list ended")
	}
	eventually(t, "every listed object handled", func() bool {
		for _, name := range names {
			if len(c.of(name)) == 0 {
				return false
			}
		}
		return true
	})

	// A change after the list: the informer tells the handler in order, so
	// once it is handled, every add of the list was told before it.
	g, err := getGadget(t, ns, "a")
	require.NoError(t, err)
	g.Spec.Size++
	_, err = gadgetClient(t, ns).Update(context.Background(), g, metav1.UpdateOptions{})
	require.NoError(t, err)
	eventually(t, "the change handled", func() bool {
		last, ok := c.last("a")
		return ok && last.generation == g.Generation+1
	})
	eventually(t, "the queue empty", func() bool { return metric(t, h.op, "opgen_workqueue_depth", "name", "gadget") == 0 })
	assert.Len(t, c.of("a"), 2, "a handled once as it arrived and once for the change")
	for _, name := range names[1:] {
		assert.Len(t, c.of(name), 1, "%s handled once: its add by the informer woke nothing", name)
	}
	assert.Equal(t, 4.0, metric(t, h.op, "opgen_workqueue_adds_total", "name", "gadget"), "three arrivals and one change")
}

// holdInitialEventsEnd holds back the bookmark that ends the first
// streamed list of resource until release is closed: the objects before
// it arrive, the list does not end.
func holdInitialEventsEnd(resource string, release <-chan struct{}) func(http.RoundTripper) http.RoundTripper {
	var once sync.Once
	return func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err != nil || r.URL.Query().Get("sendInitialEvents") != "true" || !strings.HasSuffix(r.URL.Path, "/"+resource) {
				return resp, err
			}
			once.Do(func() { resp.Body = &heldBody{ReadCloser: resp.Body, release: release, closed: make(chan struct{})} })
			return resp, err
		})
	}
}

// heldBody reads its body until the initial-events-end bookmark, returns
// what came before the bookmark, and the bookmark and the rest only once
// release is closed.
type heldBody struct {
	io.ReadCloser
	release <-chan struct{}
	closed  chan struct{}
	close   sync.Once
	head    []byte // before the bookmark, not returned yet
	tail    []byte // the bookmark on, returned after release
	found   bool
}

// Close ends a Read that waits for release too: the informer stops its
// watch from another goroutine.
func (b *heldBody) Close() error {
	b.close.Do(func() { close(b.closed) })
	return b.ReadCloser.Close()
}

func (b *heldBody) Read(p []byte) (int, error) {
	if !b.found {
		var buf []byte
		chunk := make([]byte, 32<<10)
		end := []byte(metav1.InitialEventsAnnotationKey)
		for !bytes.Contains(buf, end) {
			n, err := b.ReadCloser.Read(chunk)
			buf = append(buf, chunk[:n]...)
			if err != nil {
				return 0, err
			}
		}
		i := bytes.LastIndex(buf[:bytes.Index(buf, end)], []byte(`{"type":"BOOKMARK"`))
		if i < 0 {
			return 0, io.ErrUnexpectedEOF
		}
		b.head, b.tail, b.found = buf[:i], buf[i:], true
	}
	if len(b.head) > 0 {
		n := copy(p, b.head)
		b.head = b.head[n:]
		return n, nil
	}
	select {
	case <-b.release:
	case <-b.closed:
		return 0, io.ErrClosedPipe
	}
	if len(b.tail) > 0 {
		n := copy(p, b.tail)
		b.tail = b.tail[n:]
		return n, nil
	}
	return b.ReadCloser.Read(p)
}
