// Package servertest checks that pkg/validation gives for each test case
// what a real API server gives, in a package of its own so that the
// validation package's unit tests need no control plane.
package servertest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/pkg/validation"
	"github.com/opgen-sdk/opgen/pkg/validation/internal/testcases"
)

// Private: an operator that another package ran on the shared control
// plane leaves its admission webhooks registered (they fail closed once it
// stopped), which would refuse these tests' objects.
var env = testenv.New(testenv.Options{CRDDirs: crdDirs(), Private: true})

func crdDirs() []string {
	var dirs []string
	for _, dir := range testcases.CRDDirs {
		dirs = append(dirs, filepath.Join("..", "..", "..", dir))
	}
	return dirs
}

func TestMain(m *testing.M) { env.Main(m) }

// TestSameAsServer creates every case in dry-run and compares the
// server's causes with the expected errors and with pkg/validation's.
func TestSameAsServer(t *testing.T) {
	ctx := context.Background()
	local, err := validation.Load(crdDirs()...)
	require.NoError(t, err)
	s := newServer(t)
	ns := env.Namespace(t)
	for _, c := range testcases.Creates {
		t.Run(c.Name, func(t *testing.T) {
			u := s.unstructured(t, local, c.Object)
			_, err := s.resource(t, u, ns).Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			assert.Equal(t, c.Errors, causes(t, err), "server")
			assert.Equal(t, c.Errors, messages(local.Validate(ctx, c.Object)), "pkg/validation")
		})
	}
}

// TestSameAsServerOnUpdate updates an object the transition rule refuses.
func TestSameAsServerOnUpdate(t *testing.T) {
	ctx := context.Background()
	local, err := validation.Load(crdDirs()...)
	require.NoError(t, err)
	s := newServer(t)
	ns := env.Namespace(t)
	up := testcases.Update
	old := s.unstructured(t, local, up.Old)
	created, err := s.resource(t, old, ns).Create(ctx, old, metav1.CreateOptions{})
	require.NoError(t, err)
	u := s.unstructured(t, local, up.New)
	u.SetResourceVersion(created.GetResourceVersion())
	_, err = s.resource(t, u, ns).Update(ctx, u, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	assert.Equal(t, up.Errors, causes(t, err), "server")
	assert.Equal(t, up.Errors, messages(local.ValidateUpdate(ctx, up.New, up.Old)), "pkg/validation")
}

type server struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

func newServer(t *testing.T) *server {
	dyn, err := dynamic.NewForConfig(env.Config)
	require.NoError(t, err)
	noConversionWebhooks(t, dyn)
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	require.NoError(t, err)
	return &server{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
}

var (
	resetOnce sync.Once
	resetErr  error
)

// noConversionWebhooks sets the installed CRDs' conversion to None: these
// tests check each version's schema, and no operator runs here to serve
// the conversion webhook that config/crd names. A spoke-version object is
// still validated against its own version's schema.
func noConversionWebhooks(t *testing.T, dyn dynamic.Interface) {
	resetOnce.Do(func() {
		crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
		list, err := crds.List(context.Background(), metav1.ListOptions{})
		if err != nil {
			resetErr = err
			return
		}
		for _, crd := range list.Items {
			if s, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy"); s != "Webhook" {
				continue
			}
			patch := []byte(`{"spec":{"conversion":{"strategy":"None","webhook":null}}}`)
			if _, err := crds.Patch(context.Background(), crd.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				resetErr = err
				return
			}
		}
	})
	require.NoError(t, resetErr, "set the CRDs' conversion to None")
}

func (s *server) unstructured(t *testing.T, set *validation.Set, obj runtime.Object) *unstructured.Unstructured {
	u, err := set.ToUnstructured(obj)
	require.NoError(t, err)
	return u
}

func (s *server) resource(t *testing.T, u *unstructured.Unstructured, ns string) dynamic.ResourceInterface {
	gvk := u.GroupVersionKind()
	m, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	require.NoError(t, err)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return s.dyn.Resource(m.Resource).Namespace(ns)
	}
	return s.dyn.Resource(m.Resource)
}

// causes renders an Invalid error's causes as "field: message".
func causes(t *testing.T, err error) []string {
	if err == nil {
		return nil
	}
	var status *apierrors.StatusError
	require.True(t, errors.As(err, &status), "not a status error: %v", err)
	require.True(t, apierrors.IsInvalid(err), "not Invalid: %v", err)
	var out []string
	for _, c := range status.ErrStatus.Details.Causes {
		out = append(out, c.Field+": "+c.Message)
	}
	return out
}

func messages(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field+": "+e.ErrorBody())
	}
	return out
}

// TestSamplesAccepted creates every committed sample of the examples and
// the fixture in dry-run: the server must accept each as it is.
func TestSamplesAccepted(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	ns := env.Namespace(t)
	var files []string
	for _, dir := range testcases.CRDDirs {
		found, err := filepath.Glob(filepath.Join("..", "..", "..", filepath.Dir(dir), "samples", "*.yaml"))
		require.NoError(t, err)
		files = append(files, found...)
	}
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			u := &unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal(data, &u.Object))
			_, err = s.resource(t, u, ns).Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			assert.NoError(t, err)
		})
	}
}
