package migration_test

import (
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/migration"
)

// TestMeasureMigration times the migration of MIGRATION_MEASURE objects
// (10000 for the figures in docs/upgrading.md), by rewrite at 200 writes/s
// and through a StorageVersionMigration, with the peak Go heap of the
// rewrite. It is a measurement, not a check: it runs only when asked.
//
//	MIGRATION_MEASURE=10000 go test ./pkg/runtime/internal/migration -run TestMeasureMigration -v -timeout 30m
func TestMeasureMigration(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("MIGRATION_MEASURE"))
	if n == 0 {
		t.Skip("a measurement: set MIGRATION_MEASURE to the number of objects, such as 10000")
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 1000, 2000
	for _, via := range []string{"rewrite", "svm"} {
		ns := env.Namespace(t)
		group := via + ".measure.migration.test.opgen.dev"
		start := time.Now()
		gr := widgetsFast(t, cfg, group, ns, n)
		t.Logf("%s: created %d objects in %v", via, n, time.Since(start).Round(time.Second))
		dc := discovery.NewDiscoveryClientForConfigOrDie(cfg)
		m := &migration.Migrator{Dynamic: dynamic.NewForConfigOrDie(cfg), Discovery: dc, Resource: gr, Log: logr.Discard(), Rate: 200, SVMStart: time.Minute}
		if via == "rewrite" {
			m.Discovery = noSVM{dc}
		}
		goruntime.GC()
		debug.FreeOSMemory()
		stop, peak, rss := sampleHeap()
		start = time.Now()
		written, err := m.Run(context.Background())
		took := time.Since(start)
		stop()
		require.NoError(t, err)
		t.Logf("%s: migrated %d objects in %v (%d written by the migrator, %.0f objects/s), peak Go heap during it %.1f MiB, peak RSS of the process %.1f MiB",
			via, n, took.Round(100*time.Millisecond), written, float64(n)/took.Seconds(), float64(*peak)/(1<<20), float64(*rss)/(1<<20))
	}
}

// widgetsFast is widgets, creating the objects on 16 connections.
func widgetsFast(t *testing.T, cfg *rest.Config, group, ns string, n int) schema.GroupResource {
	gr := widgets(t, group, ns, 0)
	res := dynamic.NewForConfigOrDie(cfg).Resource(gr.WithVersion("v1alpha1")).Namespace(ns)
	// widgets moved storage to v1 already: create with v1alpha1 storage
	// first, by moving it back, so that the objects are stored as v1alpha1.
	setStorage(t, gr, "v1alpha1")
	var wg sync.WaitGroup
	work := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range work {
				u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1alpha1", "kind": "Widget",
					"metadata": map[string]any{"name": fmt.Sprintf("w-%06d", i)}, "spec": map[string]any{"size": int64(i), "text": "a spec of moderate size for a measured object"}}}
				_, err := res.Create(context.Background(), u, metav1.CreateOptions{})
				require.NoError(t, err)
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	setStorage(t, gr, "v1")
	return gr
}

func setStorage(t *testing.T, gr schema.GroupResource, version string) {
	crds := dynamic.NewForConfigOrDie(env.Config).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	crd, err := crds.Get(context.Background(), gr.String(), metav1.GetOptions{})
	require.NoError(t, err)
	vs, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range vs {
		vm := v.(map[string]any)
		vm["storage"] = vm["name"] == version
	}
	require.NoError(t, unstructured.SetNestedSlice(crd.Object, vs, "spec", "versions"))
	_, err = crds.Update(context.Background(), crd, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// sampleHeap samples the Go heap every millisecond, and the process's
// resident memory every 10, until stop.
func sampleHeap() (stop func(), peak, rss *uint64) {
	peak, rss = new(uint64), new(uint64)
	page := uint64(os.Getpagesize())
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for i := 0; ; i++ {
			rtmetrics.Read(s)
			*peak = max(*peak, s[0].Value.Uint64())
			if i%10 == 0 {
				if statm, err := os.ReadFile("/proc/self/statm"); err == nil {
					var size, resident uint64
					if _, err := fmt.Sscan(string(statm), &size, &resident); err == nil {
						*rss = max(*rss, resident*page)
					}
				}
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	return func() { close(done); wg.Wait() }, peak, rss
}
