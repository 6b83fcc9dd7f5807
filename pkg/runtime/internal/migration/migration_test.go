package migration_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/opgen-sdk/opgen/pkg/runtime/internal/migration"
	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/test/testkit"
)

// A private control plane with the controller manager, whose
// storage-version-migrator-controller runs StorageVersionMigrations.
var env = testenv.New(testenv.Options{ControllerManager: true, Private: true})

func TestMain(m *testing.M) { env.Main(m) }

// widgets installs a CRD of group, served in v1alpha1 and v1 with
// conversion None, creates n objects in ns while v1alpha1 is the storage
// version, then makes v1 the storage version.
func widgets(t *testing.T, group, ns string, n int) schema.GroupResource {
	t.Helper()
	gr := storedIn(t, group, ns, n)
	moveStorage(t, gr)
	return gr
}

// storedIn installs a CRD of Widgets of group, served in v1alpha1 (the
// storage version) and v1 with conversion None, and creates n Widgets in
// ns.
func storedIn(t *testing.T, group, ns string, n int) schema.GroupResource {
	t.Helper()
	ctx := context.Background()
	yes := true
	schemaOf := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", XPreserveUnknownFields: &yes},
		},
	}}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1alpha1", Served: true, Storage: true, Schema: schemaOf},
				{Name: "v1", Served: true, Storage: false, Schema: schemaOf},
			},
		},
	}
	require.NoError(t, env.ApplyCRDs(ctx, crd))
	dyn := dynamic.NewForConfigOrDie(env.Config)
	res := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1alpha1", Resource: "widgets"}).Namespace(ns)
	for i := range n {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1alpha1", "kind": "Widget",
			"metadata": map[string]any{"name": fmt.Sprintf("w-%04d", i)}, "spec": map[string]any{"size": int64(i)}}}
		_, err := res.Create(ctx, u, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	gr := schema.GroupResource{Group: group, Resource: "widgets"}
	require.Equal(t, map[string]int{group + "/v1alpha1": n}, storedAs(t, gr), "etcd holds them in v1alpha1")
	return gr
}

// storedAs counts gr's objects in etcd by the apiVersion they are stored
// in: what the API server wrote, not what it serves.
func storedAs(t *testing.T, gr schema.GroupResource) map[string]int {
	t.Helper()
	require.NotEmpty(t, env.EtcdURL(), "the test reads etcd: its control plane must be private")
	prefix := "/registry/" + gr.Group + "/" + gr.Resource + "/"
	end := prefix[:len(prefix)-1] + string(prefix[len(prefix)-1]+1) // every key under prefix
	body, err := json.Marshal(map[string]string{
		"key": base64.StdEncoding.EncodeToString([]byte(prefix)), "range_end": base64.StdEncoding.EncodeToString([]byte(end)),
	})
	require.NoError(t, err)
	resp, err := http.Post(env.EtcdURL()+"/v3/kv/range", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "etcd's range of %s", prefix)
	var got struct{ Kvs []struct{ Value []byte } } // the gateway's base64 values, decoded
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	out := map[string]int{}
	for _, kv := range got.Kvs {
		var obj struct{ APIVersion string }
		require.NoError(t, json.Unmarshal(kv.Value, &obj), "a custom resource is stored as JSON")
		out[obj.APIVersion]++
	}
	return out
}

// moveStorage makes v1 the storage version of gr's CRD: the objects stay
// stored as v1alpha1.
func moveStorage(t *testing.T, gr schema.GroupResource) {
	t.Helper()
	ctx := context.Background()
	crds := apiextensionsclient.NewForConfigOrDie(env.Config).ApiextensionsV1().CustomResourceDefinitions()
	got, err := crds.Get(ctx, gr.String(), metav1.GetOptions{})
	require.NoError(t, err)
	got.Spec.Versions[0].Storage, got.Spec.Versions[1].Storage = false, true
	_, err = crds.Update(ctx, got, metav1.UpdateOptions{})
	require.NoError(t, err)
	testkit.Eventually(t, "storedVersions [v1alpha1 v1]", func() bool {
		c, err := crds.Get(ctx, gr.String(), metav1.GetOptions{})
		return err == nil && slices.Equal(c.Status.StoredVersions, []string{"v1alpha1", "v1"})
	})
}

// removable checks that v1alpha1 can now be removed from the CRD, and that
// every object reads afterwards: none is stored as v1alpha1 any more.
func removable(t *testing.T, gr schema.GroupResource, n int) {
	t.Helper()
	ctx := context.Background()
	crds := apiextensionsclient.NewForConfigOrDie(env.Config).ApiextensionsV1().CustomResourceDefinitions()
	crd, err := crds.Get(ctx, gr.String(), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"v1"}, crd.Status.StoredVersions)
	assert.Equal(t, map[string]int{gr.Group + "/v1": n}, storedAs(t, gr), "etcd holds every object in v1")
	crd.Spec.Versions = crd.Spec.Versions[1:]
	_, err = crds.Update(ctx, crd, metav1.UpdateOptions{})
	require.NoError(t, err, "the API server refuses to drop a version still stored")
	list, err := dynamic.NewForConfigOrDie(env.Config).Resource(gr.WithVersion("v1")).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, list.Items, n)
}

// noSVM hides storagemigration.k8s.io: the rewrite path.
type noSVM struct{ discovery.DiscoveryInterface }

func (noSVM) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	return nil, fmt.Errorf("not served: %s", gv)
}

// TestMigrateWithStorageVersionMigration: where the API server serves
// StorageVersionMigrations and the controller manager runs them, one
// migrates the objects (RewriteUpTo -1: however few they are); then
// storedVersions is [v1], and v1alpha1 can go.
func TestMigrateWithStorageVersionMigration(t *testing.T) {
	ns := env.Namespace(t)
	gr := widgets(t, "svm.migration.test.opgen.dev", ns, 30)
	m := &migration.Migrator{Dynamic: dynamic.NewForConfigOrDie(env.Config), Discovery: discovery.NewDiscoveryClientForConfigOrDie(env.Config),
		Resource: gr, Log: testr.New(t), SVMStart: time.Minute, RewriteUpTo: -1}
	written, err := m.Run(context.Background())
	require.NoError(t, err)
	assert.Zero(t, written, "the migration wrote them, not the operator")
	removable(t, gr, 30)
}

// TestMigrateFewByRewrite: a resource with fewer objects than a page
// is written again at once, without the StorageVersionMigration that
// would wait for the controller manager's next watch bookmark.
func TestMigrateFewByRewrite(t *testing.T) {
	ns := env.Namespace(t)
	gr := widgets(t, "few.migration.test.opgen.dev", ns, 20)
	m := &migration.Migrator{Dynamic: dynamic.NewForConfigOrDie(env.Config), Discovery: discovery.NewDiscoveryClientForConfigOrDie(env.Config),
		Resource: gr, Log: testr.New(t)}
	written, err := m.Run(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 20, written, "the migrator wrote them itself")
	removable(t, gr, 20)
}

// TestMigrationStopsWhenStorageMoves: a migration whose storage version
// the CRD leaves (an upgrade right after a downgrade) stops within a
// second or so with ErrStorageMoved, not after writing every object in
// the old one; the next run migrates to the new storage version. At two
// writes a second, the 20 objects would take 10 s.
func TestMigrationStopsWhenStorageMoves(t *testing.T) {
	ns := env.Namespace(t)
	gr := widgets(t, "moved.migration.test.opgen.dev", ns, 20)
	writes := 0
	m := &migration.Migrator{Dynamic: dynamic.NewForConfigOrDie(env.Config), Discovery: noSVM{discovery.NewDiscoveryClientForConfigOrDie(env.Config)},
		Resource: gr, Log: testr.New(t), Rate: 2,
		Migrated: func(n int) {
			if writes += n; writes == 2 {
				storeIn(t, gr, "v1alpha1")
			}
		}}
	written, err := m.Run(context.Background())
	require.ErrorIs(t, err, migration.ErrStorageMoved)
	assert.Less(t, written, 10, "it went on writing in v1 for seconds after the move")
	m.Migrated, m.Rate = nil, 1000
	_, err = m.Run(context.Background())
	require.NoError(t, err)
	crd, err := apiextensionsclient.NewForConfigOrDie(env.Config).ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), gr.String(), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"v1alpha1"}, crd.Status.StoredVersions)
}

// storeIn makes version the storage version of gr's CRD.
func storeIn(t *testing.T, gr schema.GroupResource, version string) {
	t.Helper()
	ctx := context.Background()
	crds := apiextensionsclient.NewForConfigOrDie(env.Config).ApiextensionsV1().CustomResourceDefinitions()
	got, err := crds.Get(ctx, gr.String(), metav1.GetOptions{})
	require.NoError(t, err)
	for i := range got.Spec.Versions {
		got.Spec.Versions[i].Storage = got.Spec.Versions[i].Name == version
	}
	_, err = crds.Update(ctx, got, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// TestMigrateByRewrite: without StorageVersionMigrations, every object is
// written again; a run cut short resumes after the last object it
// recorded, and a second run finds nothing to do.
func TestMigrateByRewrite(t *testing.T) {
	ns := env.Namespace(t)
	gr := widgets(t, "rewrite.migration.test.opgen.dev", ns, 250)
	ctx, cancel := context.WithCancel(context.Background())
	writes := 0
	m := &migration.Migrator{Dynamic: dynamic.NewForConfigOrDie(env.Config), Discovery: noSVM{discovery.NewDiscoveryClientForConfigOrDie(env.Config)},
		Resource: gr, Log: testr.New(t), Rate: 1000,
		Migrated: func(n int) {
			if writes += n; writes == 150 {
				cancel() // a restart mid-way
			}
		}}
	_, err := m.Run(ctx)
	require.ErrorIs(t, err, context.Canceled)
	writes = 0
	written, err := m.Run(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 150, written, "resumed after the 100 objects recorded")
	written, err = m.Run(context.Background())
	require.NoError(t, err)
	assert.Zero(t, written, "nothing left to do")
	removable(t, gr, 250)
}

func unstructuredStrings(obj map[string]any, fields ...string) ([]string, bool, error) {
	return unstructured.NestedStringSlice(obj, fields...)
}
