package preview

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// TestLiveReadsTheVersionTheDryRunRanOver: a write to a cached object is
// diffed against the cache when the dry run answered with its version, and
// against a GET otherwise, or when the cache does not hold the object.
func TestLiveReadsTheVersionTheDryRunRanOver(t *testing.T) {
	t.Parallel()
	const gadgets = "/apis/test.opgen.dev/v1/namespaces/a/gadgets/"
	gadget := func(name, rv, phase string) string {
		return `{"apiVersion":"test.opgen.dev/v1","kind":"Gadget","metadata":{"name":"` + name + `","namespace":"a","resourceVersion":"` + rv + `"},` +
			`"spec":{"replicas":3},"status":{"phase":"` + phase + `"}}`
	}
	srv := &apiServer{
		objects: map[string]string{
			gadgets + "same":    gadget("same", "5", "Old"),
			gadgets + "moved":   gadget("moved", "8", "Newer"),
			gadgets + "missing": gadget("missing", "2", "Old"),
			gadgets + "gone":    gadget("gone", "4", "Old"),
		},
		answers: map[string]string{
			"PATCH " + gadgets + "same/status":    gadget("same", "5", "New"),
			"PATCH " + gadgets + "moved/status":   gadget("moved", "8", "New"),
			"PATCH " + gadgets + "missing/status": gadget("missing", "2", "New"),
			"DELETE " + gadgets + "gone":          `{"apiVersion":"v1","kind":"Status","status":"Success"}`,
		},
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()

	gvr := schema.GroupVersionResource{Group: "test.opgen.dev", Version: "v1", Resource: "gadgets"}
	cached := func(name, rv, phase string) k8sruntime.Object {
		return &unstructured.Unstructured{Object: obj(strings.Replace(gadget(name, rv, phase), `"metadata":{`,
			`"metadata":{"managedFields":[{"manager":"m"}],`, 1))}
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(),
		map[schema.GroupVersionResource]string{gvr: "GadgetList"},
		cached("same", "5", "Old"), cached("moved", "7", "Stale"), cached("gone", "4", "Old"))
	live := NewLive(client)
	live.Watch(gvr, "a", "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live.Start(ctx, time.Minute)
	p := New()
	p.ReadFrom(live)
	c := p.Client(ts.Client())
	do := func(method, path string) {
		req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(`{}`))
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	do(http.MethodPatch, gadgets+"same/status")
	do(http.MethodPatch, gadgets+"moved/status")
	do(http.MethodPatch, gadgets+"missing/status")
	do(http.MethodDelete, gadgets+"gone")

	assert.Equal(t, []string{
		"PATCH " + gadgets + "same/status?dryRun=All",
		"PATCH " + gadgets + "moved/status?dryRun=All", "GET " + gadgets + "moved",
		"PATCH " + gadgets + "missing/status?dryRun=All", "GET " + gadgets + "missing",
		"DELETE " + gadgets + "gone?dryRun=All",
	}, srv.requests, "a GET only for what the cache lacks at the dry run's version")
	change := func(name, before string) Object {
		return Object{APIVersion: "test.opgen.dev/v1", Kind: "Gadget", Resource: "gadgets", Namespace: "a", Name: name, Verbs: []string{"patch"},
			Fields: []Field{{Path: "status.phase", Before: before, After: "New"}}}
	}
	assert.Equal(t, []Object{
		{APIVersion: "test.opgen.dev/v1", Kind: "Gadget", Resource: "gadgets", Namespace: "a", Name: "gone", Verbs: []string{"delete"}},
		change("missing", "Old"),
		change("moved", "Newer"), // the GET's, not the cache's Stale
		change("same", "Old"),    // spec.replicas, an integer in the cache, is no change
	}, p.Report().Objects)
}

// TestLiveWatchesObjectsAndTheirStatus: a scale subresource answers with
// an object of its own, which the cache does not hold.
func TestLiveWatchesObjectsAndTheirStatus(t *testing.T) {
	t.Parallel()
	live := NewLive(dynamicfake.NewSimpleDynamicClient(k8sruntime.NewScheme()))
	live.Watch(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "", "")
	for path, want := range map[string]bool{
		"/apis/apps/v1/namespaces/a/deployments/d":        true,
		"/apis/apps/v1/namespaces/a/deployments/d/status": true,
		"/apis/apps/v1/namespaces/a/deployments/d/scale":  false,
		"/apis/apps/v1/namespaces/a/deployments":          false,
		"/apis/apps/v1/namespaces/a/replicasets/r":        false,
	} {
		target, _ := ParseTarget(path)
		assert.Equal(t, want, live.watches(target), path)
	}
	var none *Live
	target, _ := ParseTarget("/apis/apps/v1/namespaces/a/deployments/d")
	assert.False(t, none.watches(target), "no cache holds nothing")
}
