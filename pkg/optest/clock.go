package optest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/opgen-sdk/opgen/pkg/internal/runtimehooks"
	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// Clock is the operator's fake clock as one test holds it (Kit.Clock).
// Its Step and SetTime first wait until the operator has seen the tests'
// writes (Kit.WaitSeen), so that what the step fires reads them.
type Clock struct {
	*clocktesting.FakeClock
	kit *Kit
	t   testing.TB
}

// Step waits until the operator has seen every write made through
// Kit.Config, then moves the clock by d: requeues and periods that come
// due run at once, on what the test wrote, not on an older cache.
func (c *Clock) Step(d time.Duration) {
	c.t.Helper()
	c.kit.WaitSeen(c.t)
	c.FakeClock.Step(d)
}

// SetTime waits as Step does, then sets the clock to t.
func (c *Clock) SetTime(t time.Time) {
	c.t.Helper()
	c.kit.WaitSeen(c.t)
	c.FakeClock.SetTime(t)
}

// Clock returns the operator's fake clock (Options.FakeClock) for t, set
// to the real time: each test starts from now, not from where an earlier
// test, or the same test in an earlier run of -count=N, left it. The
// clock is one for the operator, so t holds it until it ends: the Clock
// of another test waits meanwhile, as stepping it would step the first
// test's objects too. Tests that do not take it may run in parallel.
func (k *Kit) Clock(t testing.TB) *Clock {
	t.Helper()
	if k.clock == nil {
		t.Fatal("optest: Kit.Clock needs a kit made with Options.FakeClock")
	}
	c := &Clock{FakeClock: k.clock, kit: k, t: t}
	k.clockMu.Lock()
	held := k.clockHolder == t
	k.clockMu.Unlock()
	if held {
		return c
	}
	k.clockTurn <- struct{}{}
	k.clockMu.Lock()
	k.clockHolder = t
	k.clockMu.Unlock()
	t.Cleanup(func() {
		k.clockMu.Lock()
		k.clockHolder = nil
		k.clockMu.Unlock()
		<-k.clockTurn
	})
	k.clock.SetTime(time.Now())
	return c
}

// WaitSeen waits until the running operator has seen every write made
// through Kit.Config so far, by this test or another one: its caches hold
// each written object at the version the write returned, or later, or saw
// it deleted. Writes to kinds the operator does not cache need no wait.
// Clock.Step calls it; call it before any check whose meaning depends on
// the operator having seen a write, such as a Consistently that nothing
// happens after a change. Without a running operator it returns at once.
func (k *Kit) WaitSeen(t testing.TB, opts ...WaitOption) {
	t.Helper()
	op := k.running()
	if op == nil {
		return
	}
	pending := k.writes.take()
	Eventually(t, "the operator to see the test's writes", func(ctx context.Context) (bool, error) {
		var unseen []write
		for _, w := range pending {
			if !runtimehooks.Of[*runtime.Operator]().Seen(op, w.Resource, &w.Object) {
				unseen = append(unseen, w)
			}
		}
		pending = unseen
		Saw(ctx, unseen)
		return len(unseen) == 0, nil
	}, append([]WaitOption{Every(5 * time.Millisecond)}, opts...)...)
}

// write is one write made through Kit.Config, as its answer tells: the
// object's namespace, name and resource version, or, for a delete
// answered with a Status, its namespace, name and UID.
type write struct {
	Resource schema.GroupResource `json:"resource"`
	Object   metav1.ObjectMeta    `json:"object"`
}

// writeLog records the writes made through Kit.Config until WaitSeen
// takes them.
type writeLog struct {
	mu  sync.Mutex
	all []write
}

func (l *writeLog) take() []write {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.all
	l.all = nil
	return out
}

// wrap records the object each successful create, update, patch or
// delete returns.
func (l *writeLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err != nil || r.Method == http.MethodGet || resp.StatusCode/100 != 2 ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			return resp, err
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			return resp, nil // the client reads the error from the body it gets
		}
		if w, ok := writeOf(r.Method, r.URL.Path, body); ok {
			l.mu.Lock()
			l.all = append(l.all, w)
			l.mu.Unlock()
		}
		return resp, nil
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// writeOf reads the written object from the answer to a request of path:
// its resource and namespace from the path (/api/v1/namespaces/ns/configmaps/x,
// /apis/group/version/...), its name and version from the body, or its
// name and UID from the Status a delete answered. A list, or another
// Status (a delete of a collection, an eviction), is no object.
func writeOf(method, path string, body []byte) (write, bool) {
	var obj struct {
		Kind     string            `json:"kind"`
		Metadata metav1.ObjectMeta `json:"metadata"`
		Details  struct {
			Name string    `json:"name"`
			UID  types.UID `json:"uid"`
		} `json:"details"`
	}
	if json.Unmarshal(body, &obj) != nil || strings.HasSuffix(obj.Kind, "List") {
		return write{}, false
	}
	w := write{Object: metav1.ObjectMeta{Name: obj.Metadata.Name, Namespace: obj.Metadata.Namespace, ResourceVersion: obj.Metadata.ResourceVersion}}
	if obj.Kind == "Status" {
		w.Object = metav1.ObjectMeta{Name: obj.Details.Name, UID: obj.Details.UID}
	}
	if w.Object.Name == "" || (obj.Kind == "Status" && (method != http.MethodDelete || w.Object.UID == "")) {
		return write{}, false
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(segs) >= 3 && segs[0] == "api":
		segs = segs[2:]
	case len(segs) >= 4 && segs[0] == "apis":
		w.Resource.Group, segs = segs[1], segs[3:]
	default:
		return write{}, false
	}
	if len(segs) >= 3 && segs[0] == "namespaces" && obj.Kind != "Namespace" {
		w.Object.Namespace, segs = segs[1], segs[2:]
	}
	w.Resource.Resource = segs[0]
	return w, true
}
