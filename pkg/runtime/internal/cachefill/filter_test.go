package cachefill

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/opgen-sdk/opgen/apis"
)

// decodeLoad is shaped like the benchmark suite's Load (bench/apis/load/v1):
// a ~2 KiB spec, a status with conditions, two field managers; 4.2 KiB of
// JSON with managedFields, 2.4 KiB without.
type decodeLoad struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              decodeLoadSpec   `json:"spec"`
	Status            decodeLoadStatus `json:"status,omitempty"`
}

type decodeLoadSpec struct {
	Image       string            `json:"image"`
	Replicas    int32             `json:"replicas,omitempty"`
	Command     []string          `json:"command,omitempty"`
	Env         []decodeEnvVar    `json:"env,omitempty"`
	Ports       []decodePort      `json:"ports,omitempty"`
	Config      map[string]string `json:"config,omitempty"`
	Description string            `json:"description,omitempty"`
}

type decodeEnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type decodePort struct {
	Name     string `json:"name"`
	Port     int32  `json:"port"`
	Protocol string `json:"protocol,omitempty"`
}

type decodeLoadStatus struct {
	apis.Status `json:",inline"`
	Phase       string `json:"phase,omitempty"`
	Heartbeat   int64  `json:"heartbeat,omitempty"`
}

type decodeLoadList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []decodeLoad `json:"items"`
}

// DeepCopyObject copies through JSON: the tests only decode.
func (l *decodeLoad) DeepCopyObject() kruntime.Object {
	out := &decodeLoad{}
	data, _ := json.Marshal(l)
	_ = json.Unmarshal(data, out)
	return out
}

func (l *decodeLoadList) DeepCopyObject() kruntime.Object {
	out := &decodeLoadList{}
	data, _ := json.Marshal(l)
	_ = json.Unmarshal(data, out)
	return out
}

var decodeGV = schema.GroupVersion{Group: "load.bench.opgen.dev", Version: "v1"}

// decodeObject returns the i-th object as the API server serves it: the
// spec applied by bench-author, the status by bench-status (and, with
// extra, entries of the operator itself), field sets computed by
// structured-merge-diff from what each applied.
func decodeObject(t testing.TB, i int, extra bool) map[string]any {
	env := make([]any, 10)
	for k := range env {
		env[k] = map[string]any{"name": fmt.Sprintf("SETTING_%02d", k), "value": fmt.Sprintf("value-%d-%d-%s", i, k, strings.Repeat("x", 24))}
	}
	cfg := map[string]any{}
	for k := range 10 {
		cfg[fmt.Sprintf("key-%02d", k)] = fmt.Sprintf("config value %d of object %d, %s", k, i, strings.Repeat("y", 20))
	}
	name := fmt.Sprintf("load-%05d", i)
	author := map[string]any{
		"apiVersion": decodeGV.String(), "kind": "Load",
		"metadata": map[string]any{
			"name": name, "namespace": "opgen-large",
			"labels":      map[string]any{"app.kubernetes.io/name": "load", "app.kubernetes.io/instance": name, "tier": "backend"},
			"annotations": map[string]any{"bench.opgen.dev/created-by": "the benchmark harness"},
		},
		"spec": map[string]any{
			"image": "registry.example.com/team/load:v1.2.3", "replicas": int64(i%5 + 1),
			"command": []any{"/bin/load", "--serve", "--port=8080", "--log-level=info"},
			"env":     env,
			"ports": []any{
				map[string]any{"name": "http", "port": int64(8080), "protocol": "TCP"},
				map[string]any{"name": "metrics", "port": int64(9090), "protocol": "TCP"},
				map[string]any{"name": "grpc", "port": int64(9443), "protocol": "TCP"},
			},
			"config":      cfg,
			"description": "A benchmark object shaped like a small workload. " + strings.Repeat("Lorem ipsum dolor sit amet. ", 6),
		},
	}
	status := map[string]any{
		"observedGeneration": int64(1), "phase": "Ready",
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "observedGeneration": int64(1), "reason": "Populated",
			"message": "created by the benchmark", "lastTransitionTime": "2023-11-14T22:13:20Z",
		}},
	}
	fieldSet := func(obj map[string]any) map[string]any {
		tv, err := typed.DeducedParseableType.FromUnstructured(obj)
		require.NoError(t, err)
		set, err := tv.ToFieldSet()
		require.NoError(t, err)
		data, err := set.ToJSON()
		require.NoError(t, err)
		var out map[string]any
		require.NoError(t, json.Unmarshal(data, &out))
		return out
	}
	entry := func(manager, op, sub string, fields map[string]any) map[string]any {
		e := map[string]any{"manager": manager, "operation": op, "apiVersion": decodeGV.String(), "time": "2026-11-22T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": fields}
		if sub != "" {
			e["subresource"] = sub
		}
		return e
	}
	statusFields := fieldSet(map[string]any{"status": status})
	managed := []any{
		entry("bench-author", "Apply", "", fieldSet(author)),
		entry("bench-status", "Apply", "status", statusFields),
	}
	if extra {
		managed = append(managed,
			entry("opgen-load", "Update", "", statusFields),
			entry("opgen-load", "Apply", "status", statusFields),
			entry("opgen-load", "Apply", "", map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{"f:tier": map[string]any{}}}}),
			entry("kubectl-\u00e9dit", "Update", "", statusFields))
	}
	md := author["metadata"].(map[string]any)
	md["uid"] = fmt.Sprintf("6c1f2a4e-0000-4000-8000-%012d", i)
	md["resourceVersion"] = fmt.Sprint(1000 + i)
	md["generation"] = int64(1)
	md["creationTimestamp"] = "2026-11-22T10:00:00Z"
	md["managedFields"] = managed
	author["status"] = status
	return author
}

// decodeList returns a list of n objects as JSON.
func decodeList(t testing.TB, n int, extra bool) []byte {
	items := make([]any, n)
	for i := range items {
		items[i] = decodeObject(t, i, extra)
	}
	data, err := json.Marshal(map[string]any{
		"apiVersion": decodeGV.String(), "kind": "LoadList",
		"metadata": map[string]any{"resourceVersion": "5000"},
		"items":    items,
	})
	require.NoError(t, err)
	return data
}

// decodeWatch returns a watch stream of n ADDED events and the
// initial-events-end bookmark, one JSON object a line.
func decodeWatch(t testing.TB, n int, extra bool) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range n {
		require.NoError(t, enc.Encode(map[string]any{"type": "ADDED", "object": decodeObject(t, i, extra)}))
	}
	require.NoError(t, enc.Encode(map[string]any{"type": "BOOKMARK", "object": map[string]any{
		"apiVersion": decodeGV.String(), "kind": "Load",
		"metadata": map[string]any{"resourceVersion": "5000", "annotations": map[string]any{"k8s.io/initial-events-end": "true"}},
	}}))
	return buf.Bytes()
}

// decodeClient is a REST client of decodeLoad against a server that
// answers every GET with body, through the filter unless keep.
func decodeClient(t testing.TB, body []byte, manager string, keep bool) *rest.RESTClient {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	scheme := kruntime.NewScheme()
	scheme.AddKnownTypeWithName(decodeGV.WithKind("Load"), &decodeLoad{})
	scheme.AddKnownTypeWithName(decodeGV.WithKind("LoadList"), &decodeLoadList{})
	metav1.AddToGroupVersion(scheme, decodeGV)
	cfg := &rest.Config{Host: srv.URL, APIPath: "/apis", ContentConfig: rest.ContentConfig{
		GroupVersion: &decodeGV, NegotiatedSerializer: serializer.NewCodecFactory(scheme).WithoutConversion(),
	}}
	hc, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	if !keep {
		c := *hc // rest.HTTPClientFor may return http.DefaultClient
		c.Transport = &filtered{next: c.Transport, filter: NewFilter(manager)}
		hc = &c
	}
	rc, err := rest.RESTClientForConfigAndClient(cfg, hc)
	require.NoError(t, err)
	return rc
}

func listLoads(ctx context.Context, rc *rest.RESTClient) (*decodeLoadList, error) {
	var list decodeLoadList
	return &list, rc.Get().Namespace("opgen-large").Resource("loads").Do(ctx).Into(&list)
}

func watchLoads(ctx context.Context, rc *rest.RESTClient) ([]*decodeLoad, error) {
	w, err := rc.Get().Namespace("opgen-large").Resource("loads").Param("watch", "true").Watch(ctx)
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	var out []*decodeLoad
	for e := range w.ResultChan() {
		switch e.Type {
		case watch.Bookmark:
			return out, nil
		case watch.Error:
			return nil, fmt.Errorf("watch error: %v", e.Object)
		}
		out = append(out, e.Object.(*decodeLoad))
	}
	return nil, fmt.Errorf("the watch ended before its bookmark")
}

// cached applies the cache transform the filter stands in front of.
func cached(t *testing.T, objs []*decodeLoad, heads bool) []*decodeLoad {
	for _, o := range objs {
		var err error
		if heads {
			_, err = Trim(o, "opgen-load", true, nil)
		} else {
			_, err = trimOwn(o, "opgen-load")
		}
		require.NoError(t, err)
	}
	return objs
}

func pointers(items []decodeLoad) []*decodeLoad {
	out := make([]*decodeLoad, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// TestFilterCachesTheSame checks that what the caches keep of listed and
// watched objects is the same with the filter as without: the operator's
// own apply entry, and with heads every entry's head.
func TestFilterCachesTheSame(t *testing.T) {
	ctx := Fill(context.Background())
	for _, extra := range []bool{false, true} {
		for _, heads := range []bool{false, true} {
			t.Run(fmt.Sprintf("extra=%v,heads=%v", extra, heads), func(t *testing.T) {
				list := decodeList(t, 20, extra)
				want, err := listLoads(ctx, decodeClient(t, list, "opgen-load", true))
				require.NoError(t, err)
				rc := decodeClient(t, list, "opgen-load", false)
				rc.Client.Transport.(*filtered).filter.heads.Store(heads)
				got, err := listLoads(ctx, rc)
				require.NoError(t, err)
				require.Equal(t, cached(t, pointers(want.Items), heads), cached(t, pointers(got.Items), heads))
				if extra {
					require.NotEmpty(t, got.Items[0].ManagedFields, "the own apply entry stays")
				} else if !heads {
					require.Nil(t, got.Items[0].ManagedFields, "no entry stays, nor the member")
				}

				stream := decodeWatch(t, 20, extra)
				wantW, err := watchLoads(ctx, decodeClient(t, stream, "opgen-load", true))
				require.NoError(t, err)
				rc = decodeClient(t, stream, "opgen-load", false)
				rc.Client.Transport.(*filtered).filter.heads.Store(heads)
				gotW, err := watchLoads(ctx, rc)
				require.NoError(t, err)
				require.Len(t, gotW, 20)
				require.Equal(t, cached(t, wantW, heads), cached(t, gotW, heads))
			})
		}
	}
}

// TestFilterOnlyCacheFills checks that requests outside Fill's
// context (a handler's reads) get every entry.
func TestFilterOnlyCacheFills(t *testing.T) {
	rc := decodeClient(t, decodeList(t, 2, false), "opgen-load", false)
	list, err := listLoads(context.Background(), rc)
	require.NoError(t, err)
	require.Len(t, list.Items[0].ManagedFields, 2)
	list, err = listLoads(Fill(context.Background()), rc)
	require.NoError(t, err)
	require.Empty(t, list.Items[0].ManagedFields)
}

// TestFilterReaderChunks feeds the filter one byte and half reads at a
// time, with the whitespace of pretty-printed JSON, escapes in strings and
// a first member that is dropped.
func TestFilterReaderChunks(t *testing.T) {
	f := NewFilter("opgen-load")
	in := `{"type":"ADDED","object":{"metadata":{"managedFields":[{"manager":"x","operation":"Apply","fieldsV1":{"f:a\"}":{}}}],"name":"a\\"}}}` + "\n" +
		`{ "type" : "MODIFIED" , "object" : { "metadata" : { "name" : "b{[" , "managedFields" : [ { "manager" : "opgen-load" , "operation" : "Apply" } , { "manager" : "y" } ] } } }` + "\n" +
		`{"type":"MODIFIED","object":{"metadata":{"name":"c","managedFields":[{"manager":"y"}]},"spec":{"metadata":{"managedFields":[{"manager":"z"}]}}}}` + "\n" +
		`{"kind":"LoadList","items":[{"metadata":{"managedFields":[],"name":"d"}},{"metadata":{"managedFields":[{"manager":"y"}]}}]}`
	want := `{"type":"ADDED","object":{"metadata":{"name":"a\\"}}}` + "\n" +
		`{ "type" : "MODIFIED" , "object" : { "metadata" : { "name" : "b{[" , "managedFields" : [{ "manager" : "opgen-load" , "operation" : "Apply" }] } } }` + "\n" +
		`{"type":"MODIFIED","object":{"metadata":{"name":"c"},"spec":{"metadata":{"managedFields":[{"manager":"z"}]}}}}` + "\n" +
		`{"kind":"LoadList","items":[{"metadata":{"name":"d"}},{"metadata":{}}]}`
	for name, wrap := range map[string]func(io.Reader) io.Reader{
		"whole": func(r io.Reader) io.Reader { return r },
		"bytes": iotest.OneByteReader,
		"half":  iotest.HalfReader,
	} {
		r := &reader{body: io.NopCloser(wrap(strings.NewReader(in))), filter: f}
		got, err := io.ReadAll(iotest.OneByteReader(r))
		require.NoError(t, err, name)
		require.Equal(t, want, string(got), name)
	}
	// not a stream of objects: passed on as is
	r := &reader{body: io.NopCloser(strings.NewReader(`["x",{"metadata":{"managedFields":[]}}]`)), filter: f}
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, `["x",{"metadata":{"managedFields":[]}}]`, string(got))
	// a cut stream: what came is passed on, the decoder reports the rest
	r = &reader{body: io.NopCloser(strings.NewReader(`{"metadata":{"managedFields":[{"manager":"y"}]}}{"metadata":{"mana`)), filter: f}
	got, err = io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, `{"metadata":{}}{"metadata":{"mana`, string(got))
}

// TestPaceGC checks that the GC target is lowered while any operator's
// caches fill and restored when the last is done.
func TestPaceGC(t *testing.T) {
	if os.Getenv("GOGC") != "" || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Skip("the process sets GOGC or a memory limit: PaceGC leaves the collector alone")
	}
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	a := PaceGC()
	b := PaceGC()
	require.Equal(t, syncGCPercent, debug.SetGCPercent(syncGCPercent))
	a()
	a() // twice: counted once
	require.Equal(t, syncGCPercent, debug.SetGCPercent(syncGCPercent), "another operator still syncs")
	b()
	require.Equal(t, 100, debug.SetGCPercent(100))
}

// trimOwn is the transform of a cache without heads.
func trimOwn(obj any, manager string) (any, error) { return Trim(obj, manager, false, nil) }

// filtered passes every answer through filter, as the operator's
// transport does.
type filtered struct {
	next   http.RoundTripper
	filter *Filter
}

func (t *filtered) RoundTrip(req *http.Request) (*http.Response, error) {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if err == nil {
		t.filter.Response(req, resp)
	}
	return resp, err
}
