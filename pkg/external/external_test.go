package external_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/external"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

var env = testenv.New(testenv.Options{CRDDirs: []string{"../../test/testkit/testapi/crd"}})

func TestMain(m *testing.M) { env.Main(m) }

// operator runs one operator with the records reconciler for ns until
// stop is called or the test ends.
type operator struct {
	op     *runtime.Operator
	cancel context.CancelFunc
	done   chan error
}

func start(t *testing.T, ns string, r external.Reconciler[*testapi.Gadget, recordClient, record]) *operator {
	t.Helper()
	op, err := runtime.New(env.Config, runtime.Options{
		Name: "records-operator", Namespaces: []string{ns}, MetricsAddr: "0", HealthAddr: "0",
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true}, Logger: testr.New(t),
	})
	require.NoError(t, err)
	kind, err := testapi.KindFor(op)
	require.NoError(t, err)
	require.NoError(t, testkit.Register(op, kind, plug.Handler[*testapi.Gadget](external.New(r)), runtime.ControllerOptions[*testapi.Gadget]{}))
	ctx, cancel := context.WithCancel(context.Background())
	o := &operator{op: op, cancel: cancel, done: make(chan error, 1)}
	go func() { o.done <- op.Run(ctx) }()
	t.Cleanup(func() { o.stop(t) })
	eventually(t, "the caches", op.Ready)
	return o
}

func (o *operator) stop(t *testing.T) {
	if o.cancel == nil {
		return
	}
	o.cancel()
	o.cancel = nil
	require.NoError(t, <-o.done)
}

func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, what, cond)
}

func gadgets(t testing.TB, ns string) testapi.Client {
	t.Helper()
	hc, err := rest.HTTPClientFor(env.Config)
	require.NoError(t, err)
	cs, err := testapi.NewForConfigAndClient(env.Config, hc)
	require.NoError(t, err)
	return cs.Gadgets(ns)
}

func create(t testing.TB, ns, name string, spec testapi.GadgetSpec) {
	t.Helper()
	_, err := gadgets(t, ns).Create(context.Background(), &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{})
	require.NoError(t, err)
}

func patch(t testing.TB, ns, name, body string) {
	t.Helper()
	_, err := gadgets(t, ns).Patch(context.Background(), name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
	require.NoError(t, err)
}

func get(t testing.TB, ns, name string) (*testapi.Gadget, error) {
	return gadgets(t, ns).Get(context.Background(), name, metav1.GetOptions{})
}

func ready(t testing.TB, ns, name string) bool {
	g, err := get(t, ns, name)
	return err == nil && apis.IsTrue(g, apis.Ready) && g.Status.ObservedGeneration == g.Generation
}

func gone(t testing.TB, ns, name string) bool {
	_, err := get(t, ns, name)
	return apierrors.IsNotFound(err)
}

// TestCreateUpdateDelete: the record is created with the object, updated
// when its spec changes (and only then), and deleted with it.
func TestCreateUpdateDelete(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	srv := newRecordServer()
	defer srv.Close()
	o := start(t, ns, records{server: srv})
	key := ns + "/g"

	create(t, ns, "g", testapi.GadgetSpec{Message: "hello", Size: 1})
	eventually(t, "the record and Ready", func() bool {
		r, ok := srv.get(key)
		return ok && r == record{Message: "hello", Size: 1} && ready(t, ns, "g")
	})
	assert.Equal(t, 1, srv.writeCount(), "one Create")

	// A change that is not to the spec: a Reconcile that reads, finds the
	// record in sync, and writes nothing.
	reconciled := make(chan struct{}, 10)
	telemetry.On(o.op.Telemetry(), func(e telemetry.ReconcileSucceeded) {
		if e.Verb == string(plug.Reconcile) && e.Key.Name == "g" {
			reconciled <- struct{}{}
		}
	})
	patch(t, ns, "g", `{"metadata":{"labels":{"touched":"yes"}}}`)
	<-reconciled
	assert.Equal(t, 1, srv.writeCount(), "an object in sync makes no external writes")

	patch(t, ns, "g", `{"spec":{"message":"bonjour"}}`)
	eventually(t, "the record updated", func() bool {
		r, _ := srv.get(key)
		return r.Message == "bonjour" && ready(t, ns, "g")
	})
	assert.Equal(t, []string{"POST " + key, "PUT " + key}, srv.writes)
	eventually(t, "an Updated event naming the change", func() bool {
		list, err := env.Clientset().EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range list.Items {
			if e.Reason == string(external.Updated) && e.Note == `updated the external resource: message "hello" → "bonjour"` {
				return true
			}
		}
		return false
	})

	require.NoError(t, gadgets(t, ns).Delete(context.Background(), "g", metav1.DeleteOptions{}))
	eventually(t, "the object to go", func() bool { return gone(t, ns, "g") })
	_, exists := srv.get(key)
	assert.False(t, exists, "the record went before the object")
}

// TestSurvivesExternalErrors: while the external system fails, the object
// is Degraded and retried; once it recovers the record is created and the
// object Ready; a deletion during an outage waits for the record to go.
func TestSurvivesExternalErrors(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	srv := newRecordServer()
	defer srv.Close()
	start(t, ns, records{server: srv})
	key := ns + "/g"

	srv.failing.Store(true)
	create(t, ns, "g", testapi.GadgetSpec{Message: "hello"})
	eventually(t, "Degraded with the phase and the error", func() bool {
		g, err := get(t, ns, "g")
		if err != nil {
			return false
		}
		c := findCondition(g.Status.Conditions, apis.Degraded)
		return c != nil && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, "external Read") && strings.Contains(c.Message, "500")
	})
	srv.failing.Store(false)
	eventually(t, "the record and Ready after recovery", func() bool {
		_, ok := srv.get(key)
		g, err := get(t, ns, "g")
		return ok && err == nil && apis.IsTrue(g, apis.Ready) && !apis.IsTrue(g, apis.Degraded)
	})

	srv.failing.Store(true)
	require.NoError(t, gadgets(t, ns).Delete(context.Background(), "g", metav1.DeleteOptions{}))
	eventually(t, "Delete to fail", func() bool {
		g, err := get(t, ns, "g")
		return err == nil && g.DeletionTimestamp != nil && apis.IsTrue(g, apis.Degraded)
	})
	_, exists := srv.get(key)
	require.True(t, exists)
	srv.failing.Store(false)
	eventually(t, "the object to go after the record", func() bool { return gone(t, ns, "g") })
	_, exists = srv.get(key)
	assert.False(t, exists)
}

// TestNoLeakWhenDeletedWhileStopped: an object deleted while the operator
// is down waits, held by the finalizer, and its record is deleted when
// the operator comes back.
func TestNoLeakWhenDeletedWhileStopped(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	srv := newRecordServer()
	defer srv.Close()
	key := ns + "/g"
	first := start(t, ns, records{server: srv})
	create(t, ns, "g", testapi.GadgetSpec{Message: "hello"})
	eventually(t, "the record", func() bool { _, ok := srv.get(key); return ok && ready(t, ns, "g") })
	first.stop(t)

	require.NoError(t, gadgets(t, ns).Delete(context.Background(), "g", metav1.DeleteOptions{}))
	g, err := get(t, ns, "g")
	require.NoError(t, err, "the finalizer holds the object while the operator is down")
	require.NotNil(t, g.DeletionTimestamp)

	start(t, ns, records{server: srv})
	eventually(t, "the object to go", func() bool { return gone(t, ns, "g") })
	_, exists := srv.get(key)
	assert.False(t, exists, "no record leaked")
}

// terminalOnConfigure makes Configure fail and OnError stop retrying.
type terminalOnConfigure struct{ records }

func (terminalOnConfigure) Configure(context.Context, *testapi.Gadget) (recordClient, error) {
	return recordClient{}, errors.New("no credentials")
}

func (terminalOnConfigure) OnError(_ context.Context, a *plug.Action[*testapi.Gadget], phase external.Phase, err error) error {
	a.Warning("NoCredentials", "%s: %v", phase, err)
	return plug.Terminal(err)
}

// TestOnError: a Reconciler's OnError decides what a failure becomes.
func TestOnError(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	srv := newRecordServer()
	defer srv.Close()
	start(t, ns, terminalOnConfigure{records{server: srv}})
	create(t, ns, "g", testapi.GadgetSpec{Message: "hello"})
	eventually(t, "the custom event", func() bool {
		list, err := env.Clientset().EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range list.Items {
			if e.Reason == "NoCredentials" && e.Note == "Configure: no credentials" {
				return true
			}
		}
		return false
	})
	g, err := get(t, ns, "g")
	require.NoError(t, err)
	assert.True(t, apis.IsTrue(g, apis.Degraded))
	assert.Zero(t, srv.writeCount())
	patch(t, ns, "g", `{"metadata":{"finalizers":null}}`) // give up, as the docs say
}

func findCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}
