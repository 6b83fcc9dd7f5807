package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/preview"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

type actionFunc = func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error

// upgrade is a handler in two versions. Version 1 owns a ConfigMap per
// Gadget holding spec.message and sets status.phase Ready; version 2
// changes both for every fourth Gadget (upgraded), version 3 for all.
func upgrade(version int) actionFunc {
	return func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
		msg, phase := a.Object.Spec.Message, "Ready"
		if version == 3 || version == 2 && upgraded(a.Object.Name) {
			msg, phase = msg+" v2", "Upgraded"
		}
		a.Own(corev1ac.ConfigMap(a.Object.Name+"-cm", "").WithData(map[string]string{"message": msg}))
		a.Object.Status.Phase = phase
		return nil
	}
}

func upgraded(name string) bool {
	var i int
	_, err := fmt.Sscanf(name, "g-%d", &i)
	return err == nil && i%4 == 0
}

var ownsConfigMaps = runtime.ControllerOptions[*testapi.Gadget]{Owns: []schema.GroupVersionKind{configMapGVK}}

// convergeWith runs fn over n new Gadgets of ns until every Gadget and
// ConfigMap is as fn writes them, then stops and waits until the Events
// it emitted are stored.
func convergeWith(t *testing.T, ns string, n int, fn actionFunc, done func() bool) {
	t.Helper()
	h := newOperator(t, ns, nil, runtime.Options{})
	require.NoError(t, testkit.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&deleter{handler{calls: &calls{}, fn: fn}}), ownsConfigMaps))
	h.start()
	for i := range n {
		createGadget(t, ns, fmt.Sprintf("g-%03d", i), testapi.GadgetSpec{Message: "hello"})
	}
	eventually(t, "convergence", done)
	time.Sleep(300 * time.Millisecond) // the last actions' echoes
	require.NoError(t, h.stop())
	quietEvents(t, ns)
}

// upgradeDone reports whether n Gadgets and their ConfigMaps are as upgrade(version) writes them.
func upgradeDone(t testing.TB, ns string, n, version int) func() bool {
	return func() bool {
		objs := stored(t, ns)
		for i := range n {
			name := fmt.Sprintf("g-%03d", i)
			msg, phase := "hello", "Ready"
			if version == 2 && upgraded(name) {
				msg, phase = "hello v2", "Upgraded"
			}
			g, cm := objs["gadgets/"+name], objs["configmaps/"+name+"-cm"]
			if g == nil || cm == nil || field(g, "status", "phase") != phase || field(cm, "data", "message") != msg ||
				field(g, "status", "observedGeneration") != 1.0 || field(g, "metadata", "finalizers") == nil {
				return false
			}
		}
		return true
	}
}

// runPreview runs a preview of the handler handlerOf makes over ns and
// returns its report, as its JSON document, and Run's error.
func runPreview(t *testing.T, ns string, handlerOf func(op *runtime.Operator) actionFunc) (preview.Report, error) {
	t.Helper()
	return runPreviewOf(t, ns, nil, handlerOf)
}

// runPreviewOf is runPreview of the kind kindOf makes (nil: testapi's).
func runPreviewOf(t *testing.T, ns string, kindOf func(*runtime.Operator) runtime.Kind[*testapi.Gadget], handlerOf func(op *runtime.Operator) actionFunc) (preview.Report, error) {
	t.Helper()
	var out bytes.Buffer
	h := newOperator(t, ns, nil, runtime.Options{Preview: runtime.PreviewOptions{Enabled: true, Format: "json", Output: &out}})
	kind := h.kind
	if kindOf != nil {
		kind = kindOf(h.op)
	}
	require.NoError(t, testkit.Register(h.op, kind, plug.Handler[*testapi.Gadget](&deleter{handler{calls: &calls{}, fn: handlerOf(h.op)}}), ownsConfigMaps))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	err := h.op.Run(ctx)
	t.Logf("preview took %s", time.Since(start))
	var r preview.Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &r), "the report: %s", out.String())
	return r, err
}

func same(fn actionFunc) func(*runtime.Operator) actionFunc {
	return func(*runtime.Operator) actionFunc { return fn }
}

func TestPreviewOfAConvergedClusterWritesNothing(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	convergeWith(t, ns, 50, upgrade(1), upgradeDone(t, ns, 50, 1))
	before := versions(stored(t, ns))

	r, err := runPreview(t, ns, same(upgrade(1)))
	require.NoError(t, err, "nothing would change: Run returns nil")
	assert.Empty(t, r.Objects)
	assert.Empty(t, r.Events)
	assert.Empty(t, r.Failures)
	assert.Equal(t, "0 objects would change, 0 writes, 0 events", r.Summary.Text)
	assert.Equal(t, before, versions(stored(t, ns)), "no object was written")
}

func TestPreviewReportsWhatARunWouldChange(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	const n = 20
	convergeWith(t, ns, n, upgrade(1), upgradeDone(t, ns, n, 1))
	before := stored(t, ns)

	r, err := runPreview(t, ns, same(upgrade(2)))
	require.ErrorIs(t, err, runtime.ErrPreviewChanges)
	assert.NotErrorIs(t, err, runtime.ErrPreviewFailed)
	assert.Equal(t, versions(before), versions(stored(t, ns)), "the preview stored nothing")
	assert.Equal(t, fmt.Sprintf("%d objects would change, %d writes, 0 events", n/2, n/2), r.Summary.Text, "a status and a ConfigMap of every fourth Gadget")

	convergeWith(t, ns, 0, upgrade(2), upgradeDone(t, ns, n, 2))
	after := stored(t, ns)
	var real []preview.Object
	for key, obj := range after {
		if fields := preview.Diff(before[key], obj); len(fields) > 0 && key[:7] != "events/" {
			real = append(real, preview.Object{Kind: field(obj, "kind").(string), Namespace: ns, Name: field(obj, "metadata", "name").(string), Fields: fields})
		}
	}
	assert.ElementsMatch(t, real, reported(r), "the preview reports the fields a run then changed, with their values")
}

// reported is the report's objects as the test compares them: kind,
// namespace, name and fields, their values read back from JSON.
func reported(r preview.Report) []preview.Object {
	var out []preview.Object
	for _, o := range r.Objects {
		data, _ := json.Marshal(o.Fields)
		var fields []preview.Field
		_ = json.Unmarshal(data, &fields)
		out = append(out, preview.Object{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Fields: fields})
	}
	return out
}

// stored returns every Gadget, ConfigMap and Event of ns as the API
// server stores it, by resource/name.
func stored(t testing.TB, ns string) map[string]map[string]any {
	t.Helper()
	return storedAt(t, ns, "/apis/test.opgen.dev/v1/namespaces/"+ns+"/gadgets")
}

// storedAt is stored, with the Gadgets at path.
func storedAt(t testing.TB, ns, gadgets string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for resource, path := range map[string]string{
		"gadgets":    gadgets,
		"configmaps": "/api/v1/namespaces/" + ns + "/configmaps",
		"events":     "/apis/events.k8s.io/v1/namespaces/" + ns + "/events",
	} {
		data, err := env.Clientset().CoreV1().RESTClient().Get().AbsPath(path).DoRaw(context.Background())
		require.NoError(t, err)
		var list struct {
			Kind  string           `json:"kind"`
			Items []map[string]any `json:"items"`
		}
		require.NoError(t, json.Unmarshal(data, &list))
		for _, item := range list.Items {
			if item["kind"] == nil { // items of built-in lists
				item["kind"] = list.Kind[:len(list.Kind)-len("List")]
			}
			out[resource+"/"+field(item, "metadata", "name").(string)] = item
		}
	}
	return out
}

// versions are the resource versions of objs.
func versions(objs map[string]map[string]any) map[string]any {
	out := map[string]any{}
	for k, o := range objs {
		out[k] = field(o, "metadata", "resourceVersion")
	}
	return out
}

// quietEvents waits until the Events of ns stop changing: a stopped
// operator's recorder sends its last ones from goroutines of its own.
func quietEvents(t testing.TB, ns string) {
	t.Helper()
	count := func() int {
		l, err := env.Clientset().EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		return len(l.Items)
	}
	last, since := count(), time.Now()
	eventually(t, "the Events to settle", func() bool {
		if n := count(); n != last {
			last, since = n, time.Now()
		}
		return time.Since(since) > time.Second
	})
}

func field(obj map[string]any, path ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, path...)
	return v
}

// BenchmarkPreview1000 measures a preview over 1,000 converged Gadgets,
// each with a status, a finalizer and an owned ConfigMap, from New to the
// printed report, at 2 and 8 workers: of the same handler (nothing to
// change), of its second version (a status and a ConfigMap of 250 Gadgets
// would change) and of its third (those of all 1,000 would).
func BenchmarkPreview1000(b *testing.B) {
	const n = 1000
	ns := benchNamespace(b)
	op, kind := benchOperator(b, ns, runtime.Options{LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
	_, err := runtime.Register(op, kind, plug.Handler[*testapi.Gadget](&deleter{handler{calls: &calls{}, fn: upgrade(1)}}), ownsConfigMaps)
	require.NoError(b, err)
	stop := runOperator(b, op)
	gadgets := gadgetClient(b, ns)
	for i := range n {
		_, err := gadgets.Create(context.Background(), &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("g-%03d", i)},
			Spec: testapi.GadgetSpec{Message: "hello"}}, metav1.CreateOptions{})
		require.NoError(b, err)
	}
	ready := upgradeDone(b, ns, n, 1)
	deadline := time.Now().Add(10 * time.Minute)
	for !ready() {
		require.True(b, time.Now().Before(deadline), "1,000 Gadgets did not converge in 10 minutes")
		time.Sleep(time.Second)
	}
	time.Sleep(time.Second)
	stop()
	run := func(b *testing.B, version, workers int) error {
		var out bytes.Buffer
		op, kind := benchOperator(b, ns, runtime.Options{Workers: workers, Preview: runtime.PreviewOptions{Enabled: true, Output: &out}})
		_, err := runtime.Register(op, kind, plug.Handler[*testapi.Gadget](&deleter{handler{calls: &calls{}, fn: upgrade(version)}}), ownsConfigMaps)
		require.NoError(b, err)
		return op.Run(context.Background())
	}
	for _, workers := range []int{2, 8} {
		b.Run(fmt.Sprintf("converged/workers=%d", workers), func(b *testing.B) {
			for b.Loop() {
				require.NoError(b, run(b, 1, workers))
			}
			b.ReportMetric(n, "objects")
		})
		b.Run(fmt.Sprintf("upgrade/workers=%d", workers), func(b *testing.B) {
			for b.Loop() {
				err := run(b, 2, workers)
				require.ErrorIs(b, err, runtime.ErrPreviewChanges)
				require.ErrorContains(b, err, "500 objects would change, 500 writes, 0 events")
			}
			b.ReportMetric(n, "objects")
		})
		b.Run(fmt.Sprintf("upgrade-all/workers=%d", workers), func(b *testing.B) {
			for b.Loop() {
				err := run(b, 3, workers)
				require.ErrorIs(b, err, runtime.ErrPreviewChanges)
				require.ErrorContains(b, err, "2000 objects would change, 2000 writes, 0 events")
			}
			b.ReportMetric(n, "objects")
		})
	}
}
