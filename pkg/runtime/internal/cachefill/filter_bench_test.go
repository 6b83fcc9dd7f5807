package cachefill

import (
	"bytes"
	"context"
	"fmt"
	"io"
	goruntime "runtime"
	rtmetrics "runtime/metrics"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkListDecode lists and decodes 1,000 Load-shaped objects (4.2 KiB
// of JSON each, two field managers) through a REST client, as a paged list
// and as a watch-list stream, with and without the managedFields filter,
// and as a stream whose spec no handler reads, dropped by the filter
// (early) or by the projection after the decode.
// The transform the cache runs after the decode is included in both.
//
//	go test ./pkg/runtime/internal/cachefill -run '^$' -bench BenchmarkListDecode -benchmem
func BenchmarkListDecode(b *testing.B) {
	const n = 1000
	list, stream := decodeList(b, n, false), decodeWatch(b, n, false)
	b.Logf("%d objects, %d B of JSON each", n, len(list)/n)
	ctx := Fill(context.Background())
	for _, filter := range []bool{false, true} {
		b.Run(fmt.Sprintf("list/filter=%v", filter), func(b *testing.B) {
			rc := decodeClient(b, list, "opgen-load", !filter)
			b.SetBytes(int64(len(list)))
			for b.Loop() {
				l, err := listLoads(ctx, rc)
				if err != nil || len(l.Items) != n {
					b.Fatal(err, len(l.Items))
				}
				for i := range l.Items {
					_, _ = trimOwn(&l.Items[i], "opgen-load")
				}
			}
		})
		b.Run(fmt.Sprintf("watch/filter=%v", filter), func(b *testing.B) {
			rc := decodeClient(b, stream, "opgen-load", !filter)
			b.SetBytes(int64(len(stream)))
			for b.Loop() {
				objs, err := watchLoads(ctx, rc)
				if err != nil || len(objs) != n {
					b.Fatal(err, len(objs))
				}
				for _, o := range objs {
					_, _ = trimOwn(o, "opgen-load")
				}
			}
		})
	}
	// A controller that keeps none of spec (CacheSpec empty, Project
	// zeroing it), with the spec dropped before the decode and after it.
	none, _ := NewSpec(nil)
	empty := func(obj any) { obj.(*decodeLoad).Spec = decodeLoadSpec{} }
	for _, early := range []bool{false, true} {
		b.Run(fmt.Sprintf("watch/filter=true,spec=none,early=%v", early), func(b *testing.B) {
			rc := decodeClient(b, stream, "opgen-load", false)
			ctx := ctx
			if early {
				ctx = KeepSpec(ctx, none)
			}
			b.SetBytes(int64(len(stream)))
			for b.Loop() {
				objs, err := watchLoads(ctx, rc)
				if err != nil || len(objs) != n {
					b.Fatal(err, len(objs))
				}
				for _, o := range objs {
					_, _ = Trim(o, "opgen-load", false, empty)
				}
			}
		})
	}
}

// BenchmarkSyncPeak fills a store from a watch-list stream of 10,000
// Load-shaped objects (42 MB of JSON) and reports the heap's peak during
// the fill (runtime/metrics, sampled every 100µs, and the largest GC heap
// goal) and the heap after a GC with the objects kept, with the default
// GC target and with PaceGC.
//
//	go test ./pkg/runtime/internal/cachefill -run '^$' -bench BenchmarkSyncPeak -benchmem -benchtime 3x
func BenchmarkSyncPeak(b *testing.B) {
	const n = 10000
	stream := decodeWatch(b, n, false)
	ctx := Fill(context.Background())
	for _, paced := range []bool{false, true} {
		b.Run(fmt.Sprintf("paced=%v", paced), func(b *testing.B) {
			rc := decodeClient(b, stream, "opgen-load", false)
			var peak, goal, settled float64
			for b.Loop() {
				goruntime.GC()
				base := heapMetrics()
				stop := make(chan struct{})
				peaks := make(chan [2]uint64)
				go func() {
					var p [2]uint64
					tick := time.NewTicker(100 * time.Microsecond)
					defer tick.Stop()
					for {
						m := heapMetrics()
						p[0], p[1] = max(p[0], m[0]), max(p[1], m[1])
						select {
						case <-stop:
							peaks <- p
							return
						case <-tick.C:
						}
					}
				}()
				restore := func() {}
				if paced {
					restore = PaceGC()
				}
				objs, err := watchLoads(ctx, rc)
				restore()
				close(stop)
				p := <-peaks
				if err != nil || len(objs) != n {
					b.Fatal(err, len(objs))
				}
				goruntime.GC()
				after := heapMetrics()
				goruntime.KeepAlive(objs)
				peak += float64(p[0] - base[0])
				goal += float64(p[1])
				settled += float64(after[0] - base[0])
			}
			b.ReportMetric(peak/float64(b.N)/1e6, "peak-heap-MB")
			b.ReportMetric(goal/float64(b.N)/1e6, "max-goal-MB")
			b.ReportMetric(settled/float64(b.N)/1e6, "settled-heap-MB")
		})
	}
}

// heapMetrics returns the heap's live and dead objects and the GC's heap goal.
func heapMetrics() [2]uint64 {
	s := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/goal:bytes"}}
	rtmetrics.Read(s)
	return [2]uint64{s[0].Value.Uint64(), s[1].Value.Uint64()}
}

// BenchmarkCachedBytes reports the heap bytes per cached object, by part
// (metadata, spec, status, and the rest: the struct, TypeMeta, the
// pointer), of 10,000 Load-shaped objects from a watch-list stream:
// managedFields stripped only ("stripped"), and as the cache transform
// leaves them (own entry kept, metadata strings interned: "transform").
// Each part is the heap freed by clearing it in every object (after two
// GCs); the intern tables are emptied before the last. The informer's
// index (one key string and map entry per object) comes on top.
//
//	go test ./pkg/runtime/internal/cachefill -run '^$' -bench BenchmarkCachedBytes -benchtime 1x
func BenchmarkCachedBytes(b *testing.B) {
	const n = 10000
	stream := decodeWatch(b, n, false)
	ctx := Fill(context.Background())
	heap := func() float64 {
		goruntime.GC()
		goruntime.GC()
		return float64(heapMetrics()[0])
	}
	// projected keeps the spec fields the benchmark's owned mode reads
	// (+opgen:controller:cacheSpec=image;replicas;config); empty keeps
	// none, as its other modes.
	projected := func(obj any) {
		o := obj.(*decodeLoad)
		o.Spec = decodeLoadSpec{Image: o.Spec.Image, Replicas: o.Spec.Replicas, Config: o.Spec.Config}
	}
	empty := func(obj any) { obj.(*decodeLoad).Spec = decodeLoadSpec{} }
	for _, variant := range []string{"stripped", "transform", "projected", "empty"} {
		b.Run(variant, func(b *testing.B) {
			rc := decodeClient(b, stream, "opgen-load", false)
			for b.Loop() {
				objs, err := watchLoads(ctx, rc)
				if err != nil || len(objs) != n {
					b.Fatal(err, len(objs))
				}
				for _, o := range objs {
					switch variant {
					case "stripped":
						o.ManagedFields = nil
					case "transform":
						_, _ = trimOwn(o, "opgen-load")
					case "projected":
						_, _ = Trim(o, "opgen-load", false, projected)
					case "empty":
						_, _ = Trim(o, "opgen-load", false, empty)
					}
				}
				all := heap()
				for _, o := range objs {
					o.Spec = decodeLoadSpec{}
				}
				noSpec := heap()
				for _, o := range objs {
					o.Status = decodeLoadStatus{}
				}
				noStatus := heap()
				for _, o := range objs {
					o.ObjectMeta = metav1.ObjectMeta{}
				}
				noMeta := heap()
				goruntime.KeepAlive(objs)
				objs = nil
				resetTables() // what they hold for these objects counts too
				none := heap()
				b.ReportMetric((noStatus-noMeta)/n, "metadata-B/obj")
				b.ReportMetric((all-noSpec)/n, "spec-B/obj")
				b.ReportMetric((noSpec-noStatus)/n, "status-B/obj")
				b.ReportMetric((noMeta-none)/n, "rest-B/obj")
				b.ReportMetric((all-none)/n, "total-B/obj")
			}
		})
	}
}

// BenchmarkFilterStream passes a watch-list stream of 1,000 Load-shaped
// events through the filter's reader alone, as the transport does before
// the decoder reads it: its framing and its edits, with no HTTP and no
// decode.
//
//	go test ./pkg/runtime/internal/cachefill -run '^$' -bench BenchmarkFilterStream -benchmem
func BenchmarkFilterStream(b *testing.B) {
	stream := decodeWatch(b, 1000, false)
	none, _ := NewSpec(nil)
	for _, keep := range []Spec{nil, none} {
		b.Run(fmt.Sprintf("spec=%v", keep != nil), func(b *testing.B) {
			f := NewFilter("opgen-load")
			b.SetBytes(int64(len(stream)))
			for b.Loop() {
				r := &reader{body: io.NopCloser(bytes.NewReader(stream)), filter: f, keep: keep}
				if _, err := io.Copy(io.Discard, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
