package preview

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path string
		want Target
		ok   bool
	}{
		{"/api/v1/namespaces/a/configmaps/x", Target{Version: "v1", Resource: "configmaps", Namespace: "a", Name: "x"}, true},
		{"/api/v1/namespaces/a/configmaps", Target{Version: "v1", Resource: "configmaps", Namespace: "a"}, true},
		{"/apis/test.opgen.dev/v1/namespaces/a/gadgets/g/status", Target{Group: "test.opgen.dev", Version: "v1", Resource: "gadgets", Namespace: "a", Name: "g", Subresource: "status"}, true},
		{"/apis/apps/v1/namespaces/a/deployments/d/scale", Target{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "a", Name: "d", Subresource: "scale"}, true},
		{"/api/v1/namespaces/a", Target{Version: "v1", Resource: "namespaces", Name: "a"}, true},
		{"/api/v1/namespaces/a/finalize", Target{Version: "v1", Resource: "namespaces", Name: "a", Subresource: "finalize"}, true},
		{"/api/v1/namespaces", Target{Version: "v1", Resource: "namespaces"}, true},
		{"/apis/rbac.authorization.k8s.io/v1/clusterroles/r", Target{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles", Name: "r"}, true},
		{"/apis/events.k8s.io/v1/namespaces/a/events", Target{Group: "events.k8s.io", Version: "v1", Resource: "events", Namespace: "a"}, true},
		{"/readyz", Target{}, false},
		{"/apis/apps/v1", Target{}, false},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got, ok := ParseTarget(tc.path)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
			if ok {
				assert.Equal(t, tc.path, got.Path(), "Path gives the path back")
			}
		})
	}
}

func TestDiffIgnoresVolatileFields(t *testing.T) {
	t.Parallel()
	before := obj(`{"metadata":{"name":"x","resourceVersion":"1","generation":1,"managedFields":[{"manager":"a"}],
		"labels":{"app.kubernetes.io/name":"x"}},"data":{"a":"1","b":"2"},"list":[1,2]}`)
	after := obj(`{"metadata":{"name":"x","resourceVersion":"2","generation":2,"managedFields":[{"manager":"b"}],
		"labels":{"app.kubernetes.io/name":"y"}},"data":{"a":"1","c":"3"},"list":[1,2,3]}`)
	assert.Equal(t, []Field{
		{Path: "data.b", Before: "2"},
		{Path: "data.c", After: "3"},
		{Path: "list", Before: []any{1.0, 2.0}, After: []any{1.0, 2.0, 3.0}},
		{Path: `metadata.labels["app.kubernetes.io/name"]`, Before: "x", After: "y"},
	}, Diff(before, after))
	volatile := obj(`{"metadata":{"name":"x","resourceVersion":"9","generation":7,"uid":"u","creationTimestamp":"t","managedFields":[]},
		"labels":null,"data":{"a":"1","b":"2"},"list":[1,2]}`)
	delete(before["metadata"].(map[string]any), "labels")
	assert.Empty(t, Diff(before, volatile), "only the volatile fields differ")
	assert.Equal(t, []Field{{Path: "data.a", After: "1"}, {Path: "metadata.name", After: "x"}},
		Diff(nil, obj(`{"metadata":{"name":"x","uid":"u","creationTimestamp":"t"},"data":{"a":"1"}}`)), "a new object: every field")
}

// apiServer answers as the API server would, recording what it was asked.
type apiServer struct {
	mu       sync.Mutex
	requests []string
	objects  map[string]string // by path
	answers  map[string]string // by "METHOD path"
	deletes  []string          // the bodies of deletes
}

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, strings.TrimSuffix(r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery, "?"))
	s.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	if r.Method == http.MethodGet {
		if o, ok := s.objects[r.URL.Path]; ok {
			_, _ = io.WriteString(w, o)
			return
		}
		http.Error(w, `{"kind":"Status","apiVersion":"v1","code":404}`, http.StatusNotFound)
		return
	}
	if r.Method == http.MethodDelete {
		s.mu.Lock()
		s.deletes = append(s.deletes, string(body))
		s.mu.Unlock()
	}
	if a, ok := s.answers[r.Method+" "+r.URL.Path]; ok {
		_, _ = io.WriteString(w, a)
		return
	}
	if r.Method == http.MethodDelete {
		http.Error(w, `{"kind":"Status","apiVersion":"v1","code":404}`, http.StatusNotFound)
		return
	}
	_, _ = w.Write(body) // echo
}

func TestClientDryRunsAndRecordsWrites(t *testing.T) {
	t.Parallel()
	const gadget = "/apis/test.opgen.dev/v1/namespaces/a/gadgets/g"
	const cm = "/api/v1/namespaces/a/configmaps/c"
	srv := &apiServer{
		objects: map[string]string{
			gadget: `{"apiVersion":"test.opgen.dev/v1","kind":"Gadget","metadata":{"name":"g","namespace":"a","resourceVersion":"5"},"status":{"phase":"Old"}}`,
			cm:     `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"a","resourceVersion":"6"},"data":{"k":"v"}}`,
		},
		answers: map[string]string{
			"PATCH " + gadget + "/status":          `{"apiVersion":"test.opgen.dev/v1","kind":"Gadget","metadata":{"name":"g","namespace":"a","resourceVersion":"5","managedFields":[{}]},"status":{"phase":"New"}}`,
			"PATCH " + cm:                          `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"a","resourceVersion":"7"},"data":{"k":"v"}}`,
			"DELETE " + cm:                         `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"a"}}`,
			"POST /api/v1/namespaces/a/configmaps": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"n","namespace":"a","uid":"made-up"},"data":{"x":"y"}}`,
			"POST /apis/events.k8s.io/v1/namespaces/a/events": `{"apiVersion":"events.k8s.io/v1","kind":"Event","type":"Normal","reason":"Made","note":"made it",
				"regarding":{"kind":"Gadget","namespace":"a","name":"g"}}`,
		},
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	p := New()
	c := p.Client(ts.Client())
	do := func(method, path string) int {
		body := `{}`
		if method == http.MethodDelete {
			body = `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}`
		}
		req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		require.NoError(t, err, "the caller reads the whole answer")
		return resp.StatusCode
	}
	do(http.MethodGet, cm)
	do(http.MethodPatch, gadget+"/status")
	do(http.MethodPatch, cm) // only the resource version changes: no change
	do(http.MethodPost, "/api/v1/namespaces/a/configmaps")
	do(http.MethodDelete, cm)
	do(http.MethodPost, "/apis/events.k8s.io/v1/namespaces/a/events")
	do(http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews")
	assert.Equal(t, http.StatusNotFound, do(http.MethodDelete, "/api/v1/namespaces/a/configmaps/gone"))

	assert.Equal(t, []string{
		"GET " + cm,
		"GET " + gadget, "PATCH " + gadget + "/status?dryRun=All",
		"GET " + cm, "PATCH " + cm + "?dryRun=All",
		"POST /api/v1/namespaces/a/configmaps?dryRun=All",
		"GET " + cm, "DELETE " + cm + "?dryRun=All",
		"POST /apis/events.k8s.io/v1/namespaces/a/events?dryRun=All",
		"POST /apis/authorization.k8s.io/v1/subjectaccessreviews",
		"GET /api/v1/namespaces/a/configmaps/gone",
	}, srv.requests[:11], "reads and reviews pass; every write is a dry run, read first when it changes an object")
	assert.JSONEq(t, `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background","dryRun":["All"]}`, srv.deletes[0],
		"the API server reads a delete's options from its body alone")

	r := p.Report()
	assert.Equal(t, []Object{
		{APIVersion: "test.opgen.dev/v1", Kind: "Gadget", Resource: "gadgets", Namespace: "a", Name: "g", Verbs: []string{"patch"},
			Fields: []Field{{Path: "status.phase", Before: "Old", After: "New"}}},
		{APIVersion: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "a", Name: "c", Verbs: []string{"delete"}},
		{APIVersion: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "a", Name: "n", Verbs: []string{"create"},
			Fields: []Field{{Path: "data.x", After: "y"}, {Path: "metadata.name", After: "n"}, {Path: "metadata.namespace", After: "a"}}},
	}, r.Objects)
	assert.Equal(t, []string{"would emit Event Normal Made on Gadget a/g: made it"}, r.Events)
	assert.Equal(t, "3 objects would change, 3 writes, 1 events", r.Summary.Text)
	assert.True(t, r.Changed())

	var out bytes.Buffer
	require.NoError(t, r.Write(&out, "json"))
	var back Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &back), "the JSON document reads back")
	assert.Equal(t, r.Summary, back.Summary)
	out.Reset()
	require.NoError(t, r.Write(&out, "yaml"))
	assert.Contains(t, out.String(), "text: 3 objects would change, 3 writes, 1 events")
	assert.Error(t, r.Write(&out, "xml"))
}

func TestAnEmptyPreviewChangesNothing(t *testing.T) {
	t.Parallel()
	r := New().Report()
	assert.False(t, r.Changed())
	assert.Equal(t, "0 objects would change, 0 writes, 0 events", r.Summary.Text)
}

func obj(s string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		panic(err)
	}
	return m
}

// TestRecordReadsEveryAnswer: a core Event, a write that ends its object
// (the server answers with a Status), and a collection's delete.
func TestRecordReadsEveryAnswer(t *testing.T) {
	t.Parallel()
	p := New()
	core, _ := ParseTarget("/api/v1/namespaces/a/events")
	p.record(http.MethodPost, core, nil, decode([]byte(`{"kind":"Event","type":"Warning","reason":"Failed","message":"it broke",
		"involvedObject":{"kind":"Pod","namespace":"a","name":"p"}}`)))
	gadget, _ := ParseTarget("/apis/test.opgen.dev/v1/namespaces/a/gadgets/g")
	p.record(http.MethodPatch, gadget, obj(`{"apiVersion":"test.opgen.dev/v1","kind":"Gadget","metadata":{"name":"g","finalizers":["f"]}}`),
		obj(`{"apiVersion":"v1","kind":"Status","status":"Success"}`))
	all, _ := ParseTarget("/api/v1/namespaces/a/configmaps")
	p.record(http.MethodDelete, all, nil, decode([]byte(`{"apiVersion":"v1","kind":"ConfigMapList","items":[]}`)))
	seriesOfAnEvent, _ := ParseTarget("/apis/events.k8s.io/v1/namespaces/a/events/e")
	p.record(http.MethodPatch, seriesOfAnEvent, nil, decode([]byte(`{}`)))

	r := p.Report()
	assert.Equal(t, []string{"would emit Event Warning Failed on Pod a/p: it broke"}, r.Events)
	assert.Equal(t, []Object{
		{APIVersion: "test.opgen.dev/v1", Kind: "Gadget", Resource: "gadgets", Namespace: "a", Name: "g", Verbs: []string{"patch"}},
		{APIVersion: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "a", Verbs: []string{"delete"}},
	}, r.Objects)
	assert.Equal(t, "2 objects would change, 2 writes, 1 events", r.Summary.Text)
}
