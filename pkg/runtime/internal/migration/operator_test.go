package migration_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/internal/migrationrules"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// widgetKind is the runtime.Kind of the Widgets of gr in v1, with the
// test Gadget as their Go type.
func widgetKind(t *testing.T, op *runtime.Operator, gr schema.GroupResource) runtime.Kind[*testapi.Gadget] {
	gv := schema.GroupVersion{Group: gr.Group, Version: "v1"}
	scheme := kruntime.NewScheme()
	scheme.AddKnownTypeWithName(gv.WithKind("Widget"), &testapi.Gadget{})
	scheme.AddKnownTypeWithName(gv.WithKind("WidgetList"), &testapi.GadgetList{})
	metav1.AddToGroupVersion(scheme, gv)
	client := func(ns string) *gentype.ClientWithList[*testapi.Gadget, *testapi.GadgetList] {
		c := rest.CopyConfig(op.RESTConfig())
		c.GroupVersion, c.APIPath = &gv, "/apis"
		c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
		rc, err := rest.RESTClientFor(c)
		require.NoError(t, err)
		return gentype.NewClientWithList[*testapi.Gadget, *testapi.GadgetList]("widgets", rc, kruntime.NewParameterCodec(scheme), ns,
			func() *testapi.Gadget { return &testapi.Gadget{} }, func() *testapi.GadgetList { return &testapi.GadgetList{} })
	}
	return runtime.Kind[*testapi.Gadget]{
		GVK: gv.WithKind("Widget"), Resource: "widgets", Namespaced: true,
		ListWatch: func(ns string) *cache.ListWatch {
			c := client(ns)
			return &cache.ListWatch{
				ListWithContextFunc:  func(ctx context.Context, o metav1.ListOptions) (kruntime.Object, error) { return c.List(ctx, o) },
				WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return c.Watch(ctx, o) },
			}
		},
		Client: func(ns string) plug.Client[*testapi.Gadget] { return client(ns) },
	}
}

// TestOperatorMigratesStorage: objects written while v1alpha1 was the
// storage version, storage moved to v1, the operator (with a controller
// of v1) started as a ServiceAccount with the controller's rules and the
// migration rules gen/rbac writes (internal/migrationrules) only: its
// leader migrates them, storedVersions becomes [v1], and v1alpha1 can be
// removed from the CRD; a StorageMigrated Event says so.
func TestOperatorMigratesStorage(t *testing.T) {
	ns := env.Namespace(t)
	gr := widgets(t, "op.migration.test.opgen.dev", ns, 20)
	runOperator(t, ns, gr)
	migrated(t, gr)
	removable(t, gr, 20)
}

// TestOperatorMigratesWhenStorageMoves: the operator runs while the CRD
// is upgraded to store v1; it watches its CRD, so it migrates at once,
// not at its next periodic check (10 minutes).
func TestOperatorMigratesWhenStorageMoves(t *testing.T) {
	ns := env.Namespace(t)
	gr := storedIn(t, "running.migration.test.opgen.dev", ns, 20)
	runOperator(t, ns, gr)
	moveStorage(t, gr)
	migrated(t, gr)
	removable(t, gr, 20)
}

// TestOperatorRecordsEachMigration: a migration to v1, then one back to
// v1alpha1 (a downgrade), each get a StorageMigrated Event that says
// which version: client-go merges Events of the same object, reason and
// action into one series, which keeps the first one's note.
func TestOperatorRecordsEachMigration(t *testing.T) {
	ns := env.Namespace(t)
	gr := storedIn(t, "twice.migration.test.opgen.dev", ns, 3)
	runOperator(t, ns, gr)
	moveStorage(t, gr)
	migrated(t, gr)
	storeIn(t, gr, "v1alpha1")
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return noted(gr, "every object is stored as v1alpha1 "), nil
	})
	require.NoError(t, err, "waited 30 s in vain for the StorageMigrated Event of the migration to v1alpha1")
	assert.True(t, noted(gr, "every object is stored as v1 "), "the Event of the migration to v1 is gone")
}

// noted reports whether a StorageMigrated Event about gr's CRD has a note
// that contains text.
func noted(gr schema.GroupResource, text string) bool {
	events, err := kubernetes.NewForConfigOrDie(env.Config).EventsV1().Events("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return false
	}
	for _, e := range events.Items {
		if e.Reason == "StorageMigrated" && e.Regarding.Name == gr.String() && strings.Contains(e.Note, text) {
			return true
		}
	}
	return false
}

// runOperator runs an operator with a controller of gr's v1 in ns, as a
// ServiceAccount with the controller's rules and the generated migration
// rules (gen/rbac) only, until the test ends.
func runOperator(t *testing.T, ns string, gr schema.GroupResource) {
	t.Helper()
	rules := append([]rbacv1.PolicyRule{
		{APIGroups: []string{gr.Group}, Resources: []string{"widgets"}, Verbs: []string{"get", "list", "watch", "patch"}},
		{APIGroups: []string{gr.Group}, Resources: []string{"widgets/status"}, Verbs: []string{"get", "patch", "update"}},
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}, migrationrules.For(gr.Group, gr.Resource, true)...)
	op, err := runtime.New(testkit.ServiceAccount(t, env, ns, "migrator", rules), runtime.Options{Name: "migration-test", Namespaces: []string{ns},
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true}, MetricsAddr: "0", HealthAddr: "0", Logger: testr.New(t)})
	require.NoError(t, err)
	require.NoError(t, testkit.Register(op, widgetKind(t, op, gr), plug.Handler[*testapi.Gadget](plug.HandlerFuncs[*testapi.Gadget]{}),
		runtime.ControllerOptions[*testapi.Gadget]{}))
	testkit.Run(t, op)
}

// migrated waits until gr's CRD stores v1 alone and a StorageMigrated
// Event says so: up to 90 s, since a StorageVersionMigration that the
// controller manager does not start within 30 s gives way to the rewrite.
func migrated(t *testing.T, gr schema.GroupResource) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 90*time.Second, true, func(context.Context) (bool, error) {
		return isMigrated(gr), nil
	})
	require.NoError(t, err, "waited 90 s in vain for storedVersions [v1] and the StorageMigrated Event of %s", gr)
}

// isMigrated reports whether gr is migrated (see migrated).
func isMigrated(gr schema.GroupResource) bool {
	crd, err := dynamic.NewForConfigOrDie(env.Config).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).
		Get(context.Background(), gr.String(), metav1.GetOptions{})
	if err != nil {
		return false
	}
	stored, _, _ := unstructuredStrings(crd.Object, "status", "storedVersions")
	if !slices.Equal(stored, []string{"v1"}) {
		return false
	}
	events, err := kubernetes.NewForConfigOrDie(env.Config).EventsV1().Events("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return false
	}
	for _, e := range events.Items {
		if e.Reason == "StorageMigrated" && e.Regarding.Name == gr.String() {
			return true
		}
	}
	return false
}
