package runtime_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// versionsGroup serves Gadget in v1 and v2 with the same schema and
// conversion None: the API server only rewrites apiVersion.
const versionsGroup = "versions.test.opgen.dev"

var versionsScheme = kruntime.NewScheme()

func init() {
	for _, v := range []string{"v1", "v2"} {
		gv := schema.GroupVersion{Group: versionsGroup, Version: v}
		versionsScheme.AddKnownTypes(gv, &testapi.Gadget{}, &testapi.GadgetList{})
		metav1.AddToGroupVersion(versionsScheme, gv)
	}
}

// installVersionedGadgets installs gadgets.versions.test.opgen.dev: the
// test Gadget CRD in another group, served in v1 (stored) and v2.
func installVersionedGadgets(t *testing.T) {
	t.Helper()
	crds, err := testenv.ReadCRDs(filepath.Join("..", "..", "test", "testkit", "testapi", "crd"))
	require.NoError(t, err)
	require.Len(t, crds, 1)
	crd := crds[0].DeepCopy()
	crd.Name, crd.Spec.Group = "gadgets."+versionsGroup, versionsGroup
	v2 := *crd.Spec.Versions[0].DeepCopy()
	v2.Name, v2.Storage = "v2", false
	crd.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{crd.Spec.Versions[0], v2}
	require.NoError(t, env.ApplyCRDs(context.Background(), crd))
}

// versionedClient is the typed client of Gadgets of version in ns.
func versionedClient(t testing.TB, cfg *rest.Config, version, ns string) *gentype.ClientWithList[*testapi.Gadget, *testapi.GadgetList] {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &schema.GroupVersion{Group: versionsGroup, Version: version}
	c.APIPath = "/apis"
	c.NegotiatedSerializer = serializer.NewCodecFactory(versionsScheme).WithoutConversion()
	rc, err := rest.RESTClientFor(c)
	require.NoError(t, err)
	return gentype.NewClientWithList[*testapi.Gadget, *testapi.GadgetList]("gadgets", rc, kruntime.NewParameterCodec(versionsScheme), ns,
		func() *testapi.Gadget { return &testapi.Gadget{} }, func() *testapi.GadgetList { return &testapi.GadgetList{} })
}

// versionedKind is the runtime.Kind of Gadget in version, as the generated
// glue builds one per version that has a controller.
func versionedKind(t testing.TB, op *runtime.Operator, version string) runtime.Kind[*testapi.Gadget] {
	return runtime.Kind[*testapi.Gadget]{
		GVK:        schema.GroupVersionKind{Group: versionsGroup, Version: version, Kind: "Gadget"},
		Resource:   "gadgets",
		Namespaced: true,
		ListWatch: func(ns string) *cache.ListWatch {
			c := versionedClient(t, op.RESTConfig(), version, ns)
			return &cache.ListWatch{
				ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (kruntime.Object, error) { return c.List(ctx, o) },
				WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
					return c.Watch(ctx, o)
				},
			}
		},
		Client: func(ns string) plug.Client[*testapi.Gadget] { return versionedClient(t, op.RESTConfig(), version, ns) },
	}
}

// versionCalls records which version's controller handled what, and
// whether two ever handled one object at once.
type versionCalls struct {
	mu       sync.Mutex
	list     []versionCall
	inside   map[string]string // object name -> version handling it now
	overlaps []string
}

type versionCall struct {
	version, name string
	verb          plug.Verb
	generation    int64
}

func (c *versionCalls) enter(version string, a *plug.Action[*testapi.Gadget]) func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	name := a.Object.Name
	if other, ok := c.inside[name]; ok {
		c.overlaps = append(c.overlaps, fmt.Sprintf("%s handled by %s while %s handled it", name, version, other))
	}
	c.inside[name] = version
	c.list = append(c.list, versionCall{version, name, a.Verb, a.Object.Generation})
	return func() {
		c.mu.Lock()
		delete(c.inside, name)
		c.mu.Unlock()
	}
}

func (c *versionCalls) of(version, name string) []versionCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []versionCall
	for _, x := range c.list {
		if x.version == version && x.name == name {
			out = append(out, x)
		}
	}
	return out
}

// versionHandler records its calls; it stays inside each call a moment, so
// that a second controller entering the same object at once is seen.
type versionHandler struct {
	version string
	calls   *versionCalls
}

func (h *versionHandler) Reconcile(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
	defer h.calls.enter(h.version, a)()
	time.Sleep(20 * time.Millisecond)
	return nil
}

func (h *versionHandler) Delete(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
	return h.Reconcile(ctx, a)
}

// waitNextSecond waits until the clock passes the second of the newest
// managedFields entry of obj: managedFields times have second precision,
// and the written-version rule needs the next write to be visibly newer.
func waitNextSecond(t *testing.T, obj metav1.Object) {
	t.Helper()
	var newest time.Time
	for _, e := range obj.GetManagedFields() {
		if e.Time != nil && e.Time.After(newest) {
			newest = e.Time.Time
		}
	}
	if d := time.Until(newest.Truncate(time.Second).Add(time.Second)); d > 0 {
		t.Logf("waiting %s for the clock to pass the second of %s's last write", d.Round(time.Millisecond), obj.GetName())
		time.Sleep(d)
	}
}

// TestVersionDispatch: a kind with controllers in v1 and v2. Each object is
// handled by the controller of the version it was written in, an object
// rewritten in the other version moves there (Modify, not a second Add),
// the annotation names a version, Delete runs in the version that owns the
// object, and no object is ever handled by both controllers at once.
func TestVersionDispatch(t *testing.T) {
	installVersionedGadgets(t)
	ns := env.Namespace(t)
	h := newOperator(t, ns, nil, runtime.Options{})
	calls := &versionCalls{inside: map[string]string{}}
	rule := runtime.VersionDispatch{Versions: []string{"v1", "v2"}, Written: true, Default: "v1"}
	for _, v := range []string{"v1", "v2"} {
		require.NoError(t, testkit.Register(h.op, versionedKind(t, h.op, v), plug.Handler[*testapi.Gadget](&versionHandler{version: v, calls: calls}),
			runtime.ControllerOptions[*testapi.Gadget]{Name: "gadget-" + v, VersionDispatch: &rule}))
	}
	h.start()
	cfg := env.Config
	v1, v2 := versionedClient(t, cfg, "v1", ns), versionedClient(t, cfg, "v2", ns)
	ctx := context.Background()
	write := metav1.CreateOptions{FieldManager: "writer"}

	_, err := v1.Create(ctx, &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: testapi.GadgetSpec{Size: 1}}, write)
	require.NoError(t, err)
	_, err = v2.Create(ctx, &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: testapi.GadgetSpec{Size: 1}}, write)
	require.NoError(t, err)
	eventually(t, "v1's controller to add a", func() bool { return len(calls.of("v1", "a")) > 0 })
	eventually(t, "v2's controller to add b", func() bool { return len(calls.of("v2", "b")) > 0 })
	assert.Equal(t, plug.Add, calls.of("v1", "a")[0].verb)
	assert.Equal(t, plug.Add, calls.of("v2", "b")[0].verb)
	observed := func(name string, gen int64) func() bool {
		return func() bool {
			g, err := v1.Get(ctx, name, metav1.GetOptions{})
			return err == nil && g.Status.ObservedGeneration == gen
		}
	}
	eventually(t, "a's observedGeneration 1", observed("a", 1))

	// a is written in v2: it moves to v2's controller, which sees a new
	// generation (Modify), and v1's never handles that generation.
	a, err := v1.Get(ctx, "a", metav1.GetOptions{})
	require.NoError(t, err)
	waitNextSecond(t, a)
	_, err = v2.Patch(ctx, "a", types.MergePatchType, []byte(`{"spec":{"size":2}}`), metav1.PatchOptions{FieldManager: "writer"})
	require.NoError(t, err)
	eventually(t, "v2's controller to handle a", func() bool { return len(calls.of("v2", "a")) > 0 })
	assert.Equal(t, plug.Modify, calls.of("v2", "a")[0].verb, "a handed over is not added again")
	for _, c := range calls.of("v1", "a") {
		assert.Equal(t, int64(1), c.generation, "v1's controller handled a after it moved to v2: %+v", c)
	}

	// The annotation names v1 for b, written in v2 (and handled there:
	// its status says so before it moves).
	eventually(t, "b's observedGeneration 1", observed("b", 1))
	_, err = v2.Patch(ctx, "b", types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+runtime.VersionAnnotation+`":"v1"}}}`), metav1.PatchOptions{FieldManager: "writer"})
	require.NoError(t, err)
	eventually(t, "v1's controller to handle b", func() bool { return len(calls.of("v1", "b")) > 0 })
	assert.Equal(t, plug.Reconcile, calls.of("v1", "b")[0].verb, "b handed over is reconciled from its observedGeneration")

	// Delete runs once, in the version that owns the object.
	before := len(calls.of("v1", "a"))
	require.NoError(t, v1.Delete(ctx, "a", metav1.DeleteOptions{}))
	eventually(t, "a to go", func() bool { _, err := v1.Get(ctx, "a", metav1.GetOptions{}); return apierrors.IsNotFound(err) })
	deletes := 0
	for _, c := range calls.of("v2", "a") {
		if c.verb == plug.Delete {
			deletes++
		}
	}
	assert.Equal(t, 1, deletes, "v2's controller deletes a once: %+v", calls.of("v2", "a"))
	assert.Len(t, calls.of("v1", "a"), before, "v1's controller does not touch a deleted in v2's")
	for _, c := range calls.of("v2", "b") {
		assert.NotEqual(t, plug.Delete, c.verb)
	}
	calls.mu.Lock()
	defer calls.mu.Unlock()
	assert.Empty(t, calls.overlaps, "an object handled by both controllers at once")
}

// TestVersionDispatchRules: the rule on objects, without a server.
func TestVersionDispatchRules(t *testing.T) {
	at := func(sec int64) *metav1.Time { tm := metav1.Unix(sec, 0); return &tm }
	entry := func(manager, apiVersion, sub string, sec int64) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, APIVersion: apiVersion, Subresource: sub, Time: at(sec), Operation: metav1.ManagedFieldsOperationUpdate}
	}
	written := runtime.VersionDispatch{Versions: []string{"v1", "v2"}, Written: true, Default: "v1"}
	named := runtime.VersionDispatch{Versions: []string{"v1", "v2"}, Default: "v2"}
	tests := []struct {
		name        string
		rule        runtime.VersionDispatch
		entries     []metav1.ManagedFieldsEntry
		annotations map[string]string
		want        string
	}{
		{"newest write", written, []metav1.ManagedFieldsEntry{entry("kubectl", "g/v1", "", 1), entry("kubectl", "g/v2", "", 2)}, nil, "v2"},
		{"status writes do not count", written, []metav1.ManagedFieldsEntry{entry("kubectl", "g/v1", "", 1), entry("x", "g/v2", "status", 2)}, nil, "v1"},
		{"the operator's writes do not count", written, []metav1.ManagedFieldsEntry{entry("kubectl", "g/v2", "", 1), entry("op", "g/v1", "", 2)}, nil, "v2"},
		{"a tie goes to the default", written, []metav1.ManagedFieldsEntry{entry("a", "g/v2", "", 2), entry("b", "g/v1", "", 2)}, nil, "v1"},
		{"a version without a controller goes to the default", written, []metav1.ManagedFieldsEntry{entry("a", "g/v3", "", 2)}, nil, "v1"},
		{"only the operator wrote", written, []metav1.ManagedFieldsEntry{entry("op", "g/v2", "", 2)}, nil, "v1"},
		{"the annotation wins", written, []metav1.ManagedFieldsEntry{entry("a", "g/v1", "", 2)}, map[string]string{runtime.VersionAnnotation: "v2"}, "v2"},
		{"an annotation naming no controller is ignored", written, []metav1.ManagedFieldsEntry{entry("a", "g/v2", "", 2)}, map[string]string{runtime.VersionAnnotation: "v9"}, "v2"},
		{"named: the default", named, []metav1.ManagedFieldsEntry{entry("a", "g/v1", "", 2)}, nil, "v2"},
		{"named: the annotation", named, nil, map[string]string{runtime.VersionAnnotation: "v1"}, "v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &metav1.ObjectMeta{ManagedFields: tt.entries, Annotations: tt.annotations}
			assert.Equal(t, tt.want, tt.rule.Version(obj, "op"))
		})
	}
}

// TestVersionDispatchRegisterSaysWhatToFix: rules that cannot place
// objects fail at Register, without a server.
func TestVersionDispatchRegisterSaysWhatToFix(t *testing.T) {
	newOp := func() *runtime.Operator {
		op, err := runtime.New(&rest.Config{Host: "https://127.0.0.1:1"}, runtime.Options{Name: "op", LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
		require.NoError(t, err)
		return op
	}
	noop := plug.HandlerFuncs[*testapi.Gadget]{}
	opts := func(name string, d runtime.VersionDispatch) runtime.ControllerOptions[*testapi.Gadget] {
		return runtime.ControllerOptions[*testapi.Gadget]{Name: name, VersionDispatch: &d}
	}
	both := runtime.VersionDispatch{Versions: []string{"v1", "v2"}, Written: true, Default: "v1"}

	op := newOp()
	err := testkit.Register(op, versionedKind(t, op, "v3"), noop, opts("g3", both))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "lacks the controller's own version v3")

	err = testkit.Register(op, versionedKind(t, op, "v1"), noop, opts("g1", runtime.VersionDispatch{Versions: []string{"v1", "v2"}, Default: "v9"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `Default "v9" is not one of its Versions`)

	op = newOp()
	require.NoError(t, testkit.Register(op, versionedKind(t, op, "v1"), noop, opts("g1", both)))
	err = testkit.Register(op, versionedKind(t, op, "v2"), noop, opts("g2", runtime.VersionDispatch{Versions: []string{"v1", "v2"}, Default: "v2"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "give every version's controller the same")
	err = testkit.Register(op, versionedKind(t, op, "v1"), noop, opts("g1b", both))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "one controller per version")
	require.NoError(t, testkit.Register(op, versionedKind(t, op, "v2"), noop, opts("g2", both)))
}
