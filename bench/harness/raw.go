package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	loadv1 "github.com/opgen-sdk/opgen/bench/apis/load/v1"
	"github.com/opgen-sdk/opgen/bench/pkg/generated/clientset/versioned"
)

// Patch types of the status-write bound: a JSON merge patch of the changed
// fields (what controller-runtime's client.MergeFrom sends) and a
// server-side apply of the whole status by a field manager (what opgen's
// ApplyStatus sends when a list of the status changed; a change of values
// only it sends as a merge patch too). watchedApply is applyPatch while a typed watch of
// the namespace receives and decodes the event of every write: what the
// server and the machine do for an operator's writes, with the watch no
// operator runs without, and nothing of a framework.
const (
	mergePatch   = "merge"
	applyPatch   = "apply"
	watchedApply = "watched"
)

// rawClient is a plain client-go program on the generated clientset, with
// the same rate limits as the operators.
func (s *suite) rawClient() (versioned.Interface, error) {
	cfg := s.adminConfig()
	cfg.QPS, cfg.Burst = float32(s.cfg.qps), s.cfg.burst
	return versioned.NewForConfig(cfg)
}

// plainClient is rawClient asking for no compression: the API server
// gzips a list's page over 128 KiB for a client that accepts it, as
// client-go's does by default.
func (s *suite) plainClient() (versioned.Interface, error) {
	cfg := s.adminConfig()
	cfg.QPS, cfg.Burst = float32(s.cfg.qps), s.cfg.burst
	cfg.DisableCompression = true
	return versioned.NewForConfig(cfg)
}

// cborClient is rawClient asking for CBOR (-cbor). It checks that the API
// server answers in CBOR: client-go falls back to JSON without a word when
// its gate is off.
func (s *suite) cborClient(ctx context.Context, ns string) (versioned.Interface, error) {
	cfg := s.adminConfig()
	cfg.ContentType = "application/cbor"
	cfg.AcceptContentTypes = "application/cbor"
	cs, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	var ct string
	if err := cs.LoadV1().RESTClient().Get().Namespace(ns).Resource("loads").Param("limit", "1").Do(ctx).ContentType(&ct).Error(); err != nil {
		return nil, err
	}
	if ct != "application/cbor" {
		return nil, fmt.Errorf("the API server answered a CBOR list in %q: is KUBE_FEATURE_ClientsAllowCBOR read before -cbor set it?", ct)
	}
	return cs, nil
}

// statusPatch returns the body of one status write of the given type.
func statusPatch(kind, ns, name string, gen, heartbeat int64) []byte {
	if kind == mergePatch {
		return fmt.Appendf(nil, `{"status":{"observedGeneration":%d,"heartbeat":%d}}`, gen, heartbeat)
	}
	st := loadv1.Load{
		TypeMeta:   metav1.TypeMeta{APIVersion: opgenGroup + "/v1", Kind: "Load"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
	}
	st.Status.ObservedGeneration = gen
	st.Status.Phase = "Ready"
	st.Status.Heartbeat = heartbeat
	st.Status.Conditions = []metav1.Condition{{
		Type: "Ready", Status: metav1.ConditionTrue, ObservedGeneration: 1, Reason: "Populated",
		Message: "created by the benchmark", LastTransitionTime: metav1.NewTime(time.Unix(1_700_000_000, 0)),
	}}
	data, _ := json.Marshal(st)
	return data
}

// writeRate runs conc writers of status patches of kind for d over the n
// objects of the raw namespace and returns writes per second.
func writeRate(ctx context.Context, cs versioned.Interface, kind string, conc, n int, d time.Duration) (float64, error) {
	c := cs.LoadV1().Loads(rawNamespace)
	if kind == watchedApply {
		stop, err := drainWatch(ctx, cs)
		if err != nil {
			return 0, err
		}
		defer stop()
	}
	var count atomic.Int64
	var firstErr atomic.Pointer[error]
	deadline := time.Now().Add(d)
	var hb atomic.Int64
	hb.Store(time.Now().UnixNano() / 1000)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conc {
		wg.Go(func() {
			for i := w; time.Now().Before(deadline); i += conc {
				name := objectName(i % n)
				pt, opts := types.MergePatchType, metav1.PatchOptions{}
				if kind != mergePatch {
					pt, opts = types.ApplyPatchType, metav1.PatchOptions{FieldManager: "raw-client", Force: ptr.To(true)}
				}
				if _, err := c.Patch(ctx, name, pt, statusPatch(kind, rawNamespace, name, 1, hb.Add(1)), opts, "status"); err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
				count.Add(1)
			}
		})
	}
	wg.Wait()
	if e := firstErr.Load(); e != nil {
		return 0, *e
	}
	return float64(count.Load()) / time.Since(start).Seconds(), nil
}

// drainWatch watches the raw namespace from now on with the typed
// clientset, decoding and dropping every event, until stop is called.
func drainWatch(ctx context.Context, cs versioned.Interface) (stop func(), err error) {
	c := cs.LoadV1().Loads(rawNamespace)
	l, err := c.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, err
	}
	wi, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range wi.ResultChan() {
		}
	}()
	return func() { wi.Stop(); <-done }, nil
}

// specWriter patches spec.replicas of random objects at a steady rate and
// remembers when each write started, by name and resulting generation.
type specWriter struct {
	mu     sync.Mutex
	writes []rec // one per PATCH: the object, its new generation, when it was sent
	seq    atomic.Int64
}

// run writes at rate per second for d, to objects of ns in group's
// clientset (c patches one object and returns its new generation).
func (w *specWriter) run(ctx context.Context, rate float64, d time.Duration, n int, patch func(ctx context.Context, name string, body []byte) (int64, error)) error {
	w.seq.Store(100 + rand.Int64N(1000))
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	end := time.After(d)
	var wg sync.WaitGroup
	defer wg.Wait()
	var firstErr atomic.Pointer[error]
	for {
		select {
		case <-end:
			wg.Wait()
			if e := firstErr.Load(); e != nil {
				return *e
			}
			return nil
		case <-tick.C:
		}
		name := objectName(rand.IntN(n))
		body := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, w.seq.Add(1))
		wg.Go(func() {
			t := time.Now()
			gen, err := patch(ctx, name, body)
			if err != nil {
				firstErr.CompareAndSwap(nil, &err)
				return
			}
			w.mu.Lock()
			w.writes = append(w.writes, rec{name: name, gen: gen, t: t})
			w.mu.Unlock()
		})
	}
}

// watcher records when watch events for each name/generation arrive.
type watcher struct {
	mu     sync.Mutex
	events firsts
}

func (w *watcher) follow(ctx context.Context, wi watch.Interface) {
	defer wi.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return
			}
			now := time.Now()
			m, err := metaOf(ev.Object)
			if err != nil {
				continue
			}
			w.mu.Lock()
			w.events.add(m.GetName(), m.GetGeneration(), now)
			w.mu.Unlock()
		}
	}
}

// firsts holds, per object name, the first time each generation of it was
// seen (its watch event, or the start of its reconcile).
type firsts map[string][]rec

func (f firsts) add(name string, gen int64, t time.Time) {
	for _, r := range f[name] {
		if r.gen == gen {
			return
		}
	}
	f[name] = append(f[name], rec{name: name, gen: gen, t: t})
}

// handled returns the first time generation gen of name, or a later one,
// was seen. A later generation counts: two writes to one object before its
// reconcile are handled by one reconcile of the second, as a level-based
// controller should.
func (f firsts) handled(name string, gen int64) (t time.Time, ok bool) {
	for _, r := range f[name] {
		if r.gen >= gen && (!ok || r.t.Before(t)) {
			t, ok = r.t, true
		}
	}
	return t, ok
}

// unhandled counts the writes with nothing seen of their generation.
func (f firsts) unhandled(writes []rec) int {
	n := 0
	for _, w := range writes {
		if _, ok := f.handled(w.name, w.gen); !ok {
			n++
		}
	}
	return n
}

// latencies returns, for each write, the time from its start to the first
// sight of its generation or a later one in seen.
func latencies(writes []rec, seen firsts) (out []float64, missing int) {
	for _, w := range writes {
		t, ok := seen.handled(w.name, w.gen)
		if !ok {
			missing++
			continue
		}
		out = append(out, t.Sub(w.t).Seconds())
	}
	return out, missing
}

// rawList lists and decodes the objects of one size, over JSON gzipped
// (client-go's default) and not, and with -cbor over CBOR too.
func (s *suite) rawList(ctx context.Context, cs versioned.Interface, size string) error {
	ns := namespace(s.primary(), size)
	d, n, err := listDecode(ctx, cs, ns)
	if err != nil {
		return err
	}
	s.res.Raw["list."+size+".seconds"] = append(s.res.Raw["list."+size+".seconds"], d.Seconds())
	s.res.Raw["list."+size+".objects"] = []float64{float64(n)}
	plain, err := s.plainClient()
	if err != nil {
		return err
	}
	if d, _, err = listDecode(ctx, plain, ns); err != nil {
		return err
	}
	s.res.Raw["list."+size+".plain.seconds"] = append(s.res.Raw["list."+size+".plain.seconds"], d.Seconds())
	if !s.cfg.cbor {
		return nil
	}
	cbor, err := s.cborClient(ctx, ns)
	if err != nil {
		return err
	}
	d, _, err = listDecode(ctx, cbor, ns)
	if err != nil {
		return fmt.Errorf("list over CBOR (-cbor): %w", err)
	}
	s.res.Raw["list."+size+".cbor.seconds"] = append(s.res.Raw["list."+size+".cbor.seconds"], d.Seconds())
	return nil
}

// fastest is the fastest read (listDecode, streamDecode or streamRead) of
// ns through each of clients, each after waitIdle. Every read must carry
// want objects.
func fastest(ctx context.Context, read func(context.Context, versioned.Interface, string) (time.Duration, int, error), ns string, want int, clients ...versioned.Interface) (time.Duration, error) {
	var best time.Duration
	for _, cs := range clients {
		waitIdle()
		d, n, err := read(ctx, cs, ns)
		if err != nil {
			return 0, err
		}
		if n != want {
			return 0, fmt.Errorf("a read of %s carried %d objects, want %d", ns, n, want)
		}
		if best == 0 || d < best {
			best = d
		}
	}
	return best, nil
}

// streamDecode lists every Load of ns as a streamed list (a watch with
// sendInitialEvents, served from the API server's watch cache; what
// client-go's reflector asks for with WatchListClient on) into typed
// objects through the generated clientset's watch, and returns the time
// from the request to the bookmark that ends the initial events.
func streamDecode(ctx context.Context, cs versioned.Interface, ns string) (time.Duration, int, error) {
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := cs.LoadV1().Loads(ns).Watch(ctx, metav1.ListOptions{
		SendInitialEvents:    ptr.To(true),
		AllowWatchBookmarks:  true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
	})
	if err != nil {
		return 0, 0, err
	}
	defer w.Stop()
	items := 0
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Added:
			items++
		case watch.Bookmark:
			if m, err := meta.Accessor(ev.Object); err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
				return time.Since(start), items, nil
			}
		case watch.Error:
			return 0, 0, apierrors.FromObject(ev.Object)
		}
	}
	return 0, 0, fmt.Errorf("the streamed list of %s ended after %d objects without the bookmark that ends the initial events", ns, items)
}

// streamRead reads the streamed list of ns as streamDecode asks for it,
// without decoding it: the events' lines are counted, and the one that
// ends the initial events is found by its annotation. It returns the
// time from the request to that line, what the API server takes to send
// the stream.
func streamRead(ctx context.Context, cs versioned.Interface, ns string) (time.Duration, int, error) {
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body, err := cs.LoadV1().RESTClient().Get().Namespace(ns).Resource("loads").
		Param("watch", "true").
		Param("sendInitialEvents", "true").
		Param("allowWatchBookmarks", "true").
		Param("resourceVersionMatch", string(metav1.ResourceVersionMatchNotOlderThan)).
		SetHeader("Accept", "application/json").
		Stream(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer body.Close()
	end := []byte(`"` + metav1.InitialEventsAnnotationKey + `":"true"`)
	r := bufio.NewReaderSize(body, 1<<20)
	items := 0
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return 0, 0, fmt.Errorf("an event of the streamed list of %s is over %d bytes", ns, r.Size())
		}
		if err != nil {
			return 0, 0, fmt.Errorf("the streamed list of %s ended after %d objects without the bookmark that ends the initial events: %w", ns, items, err)
		}
		switch {
		case bytes.HasPrefix(line, []byte(`{"type":"ADDED"`)):
			items++
		case bytes.HasPrefix(line, []byte(`{"type":"BOOKMARK"`)) && bytes.Contains(line, end):
			return time.Since(start), items, nil
		}
	}
}

// listDecode lists every Load of ns in pages of 500 into typed objects and
// returns the time taken.
func listDecode(ctx context.Context, cs versioned.Interface, ns string) (time.Duration, int, error) {
	start := time.Now()
	items := 0
	opts := metav1.ListOptions{Limit: 500}
	for {
		l, err := cs.LoadV1().Loads(ns).List(ctx, opts)
		if err != nil {
			return 0, 0, err
		}
		items += len(l.Items)
		if l.Continue == "" {
			break
		}
		opts.Continue = l.Continue
	}
	return time.Since(start), items, nil
}
