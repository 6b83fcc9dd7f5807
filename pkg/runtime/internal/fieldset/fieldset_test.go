package fieldset_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/openapi"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/cachefill"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/fieldset"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

var env = testenv.New(testenv.Options{CRDDirs: []string{"../../../../test/testkit/testapi/crd"}})

func TestMain(m *testing.M) { env.Main(m) }

const manager = "fieldset-test"

func obj(apiVersion, kind, ns, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"app": name}, "annotations": map[string]any{"opgen.dev/applied-hash": "x"}}}}
	for k, v := range fields {
		u.Object[k] = v
	}
	return u
}

// The field set the API server records for an apply is the one Of
// computes from the body, for built-in kinds and a custom kind.
func TestOfMatchesTheServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := env.Namespace(t)
	dyn, err := dynamic.NewForConfig(env.Config)
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	schemas := fieldset.NewSchemas(cs.Discovery().OpenAPIV3())
	owner := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "0f1e2d3c-0000-4000-8000-000000000001", "controller": true, "blockOwnerDeletion": true}
	container := map[string]any{"name": "web", "image": "nginx", "ports": []any{map[string]any{"containerPort": int64(80)}}}
	cases := []struct {
		gvr  schema.GroupVersionResource
		body *unstructured.Unstructured
	}{
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
			obj("v1", "ConfigMap", ns, "cm", map[string]any{"data": map[string]any{"a": "1", "b": "2"}})},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
			obj("apps/v1", "Deployment", ns, "web", map[string]any{"spec": map[string]any{
				"replicas": int64(2),
				"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
					"spec": map[string]any{"containers": []any{container}}},
			}})},
		{schema.GroupVersionResource{Version: "v1", Resource: "services"},
			obj("v1", "Service", ns, "web", map[string]any{"spec": map[string]any{
				"selector": map[string]any{"app": "web"},
				"ports":    []any{map[string]any{"port": int64(80), "targetPort": int64(8080)}},
			}})},
		{schema.GroupVersionResource{Group: "test.opgen.dev", Version: "v1", Resource: "gadgets"},
			obj("test.opgen.dev/v1", "Gadget", ns, "g", map[string]any{"spec": map[string]any{"size": int64(3)}})},
	}
	for _, tc := range cases {
		t.Run(tc.body.GetKind(), func(t *testing.T) {
			tc.body.SetOwnerReferences([]metav1.OwnerReference{})
			require.NoError(t, unstructured.SetNestedSlice(tc.body.Object, []any{owner}, "metadata", "ownerReferences"))
			got, err := dyn.Resource(tc.gvr).Namespace(ns).Apply(ctx, tc.body.GetName(), tc.body, metav1.ApplyOptions{FieldManager: manager, Force: true})
			require.NoError(t, err)
			want, err := schemas.Of(tc.body)
			require.NoError(t, err)
			var entry []byte
			for _, e := range got.GetManagedFields() {
				if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply {
					entry = e.FieldsV1.GetRawBytes()
				}
			}
			require.NotNil(t, entry)
			assert.Equal(t, cachefill.FieldsHash(entry), want, "the server recorded %s", entry)
		})
	}
}

// server is the API server's OpenAPI v3, counting what is read of it. Its
// schemas' addresses carry a tag of the test's own, so that no schema
// another test read is shared with it.
type server struct {
	openapi.Client
	tag string

	mu       sync.Mutex
	paths    int            // reads of the paths
	schemas  map[string]int // reads of each group version's schema
	failing  int            // reads of the paths that fail from now
	blocking map[string]chan struct{}
	blocked  chan string // the path of each read that blocks
}

func newServer(t *testing.T) *server {
	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	return &server{Client: cs.Discovery().OpenAPIV3(), tag: fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()),
		schemas: map[string]int{}, blocking: map[string]chan struct{}{}, blocked: make(chan string, 8)}
}

func (s *server) Paths() (map[string]openapi.GroupVersion, error) {
	s.mu.Lock()
	s.paths++
	failing := s.failing > 0
	if failing {
		s.failing--
	}
	s.mu.Unlock()
	if failing {
		return nil, errors.New("the server is not ready")
	}
	paths, err := s.Client.Paths()
	if err != nil {
		return nil, err
	}
	for p, gv := range paths {
		paths[p] = &groupVersion{GroupVersion: gv, server: s, path: p}
	}
	return paths, nil
}

func (s *server) counts() (paths int, schemas map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paths, maps.Clone(s.schemas)
}

type groupVersion struct {
	openapi.GroupVersion
	server *server
	path   string
}

func (g *groupVersion) Schema(contentType string) ([]byte, error) {
	s := g.server
	s.mu.Lock()
	s.schemas[g.path]++
	block := s.blocking[g.path]
	s.mu.Unlock()
	if block != nil {
		s.blocked <- g.path
		<-block
	}
	return g.GroupVersion.Schema(contentType)
}

func (g *groupVersion) ServerRelativeURL() string {
	return g.GroupVersion.ServerRelativeURL() + "&test=" + g.server.tag
}

var (
	configMap = obj("v1", "ConfigMap", "ns", "cm", map[string]any{"data": map[string]any{"a": "1"}})
	gadget    = obj("test.opgen.dev/v1", "Gadget", "ns", "g", map[string]any{"spec": map[string]any{"size": int64(3)}})
)

// Operators of one process read and parse a group version's schema once:
// an operator started again in the process (as a test restarts one) does
// not wait for its first reconciles to read api/v1 anew.
func TestSchemasReadOncePerProcess(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	first := fieldset.NewSchemas(srv)
	_, err := first.Of(configMap)
	require.NoError(t, err)
	again := fieldset.NewSchemas(srv)
	_, err = again.Of(configMap)
	require.NoError(t, err)
	paths, schemas := srv.counts()
	assert.Equal(t, 2, paths, "each operator reads which schemas the server has")
	assert.Equal(t, map[string]int{"api/v1": 1}, schemas, "the schema of api/v1 is read once")
}

// While a group version's schema is read, Of of another group version
// does not wait for it, and Of of the same one waits for that read rather
// than read it again.
func TestSchemasReadGroupVersionsApart(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	release := make(chan struct{})
	srv.blocking["apis/test.opgen.dev/v1"] = release
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	s := fieldset.NewSchemas(srv)
	gadgets := make(chan error, 2)
	go func() { _, err := s.Of(gadget); gadgets <- err }()
	require.Equal(t, "apis/test.opgen.dev/v1", <-srv.blocked)
	go func() { _, err := s.Of(gadget); gadgets <- err }()

	configMaps := make(chan error, 1)
	go func() { _, err := s.Of(configMap); configMaps <- err }()
	select {
	case err := <-configMaps:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("Of of a ConfigMap waited for the read of test.opgen.dev/v1")
	}
	close(release)
	require.NoError(t, <-gadgets)
	require.NoError(t, <-gadgets)
	_, schemas := srv.counts()
	assert.Equal(t, map[string]int{"apis/test.opgen.dev/v1": 1, "api/v1": 1}, schemas, "each schema is read once")
}

// A failed read is tried again soon, not after many seconds (every Of
// fails meanwhile, and the operator applies what it could skip), but not
// at every Of either.
func TestSchemasRetryAFailedReadSoon(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.failing = 1
	s := fieldset.NewSchemas(srv)
	s.Prepare(configMap.GroupVersionKind())
	_, err := s.Of(configMap)
	require.Error(t, err, "the failure stands a moment")
	paths, _ := srv.counts()
	require.Equal(t, 1, paths, "Of does not read again at once")
	require.Eventually(t, func() bool {
		_, err := s.Of(configMap)
		return err == nil
	}, 3*time.Second, 10*time.Millisecond, "a failed read is tried again within 3s")
	paths, schemas := srv.counts()
	assert.Equal(t, 2, paths, "one read after the failure")
	assert.Equal(t, map[string]int{"api/v1": 1}, schemas)
}
