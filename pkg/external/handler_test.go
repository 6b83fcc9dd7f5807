package external_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/external"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// fakeSystem is an in-memory external system for unit tests of the
// phases: one value per object name, and a log of the phases that wrote.
type fakeSystem struct {
	values map[string]string
	calls  []string
	fail   external.Phase
}

func (f *fakeSystem) reconciler() external.Funcs[*testapi.Gadget, *fakeSystem, string] {
	fail := func(p external.Phase) error {
		f.calls = append(f.calls, string(p))
		if f.fail == p {
			return errors.New(string(p) + " broke")
		}
		return nil
	}
	return external.Funcs[*testapi.Gadget, *fakeSystem, string]{
		ConfigureFunc: func(context.Context, *testapi.Gadget) (*fakeSystem, error) { return f, nil },
		ReadFunc: func(_ context.Context, c *fakeSystem, g *testapi.Gadget) (string, bool, error) {
			v, ok := c.values[g.Name]
			return v, ok, fail(external.PhaseRead)
		},
		DiffFunc: func(g *testapi.Gadget, actual string) external.Diff {
			if g.Spec.Message != actual {
				return external.Diff{NeedUpdate: true, Changes: []string{"message"}}
			}
			return external.Diff{}
		},
		CreateFunc: func(_ context.Context, c *fakeSystem, g *testapi.Gadget) (external.Result, error) {
			c.values[g.Name] = g.Spec.Message
			return external.Done(), fail(external.PhaseCreate)
		},
		UpdateFunc: func(_ context.Context, c *fakeSystem, g *testapi.Gadget, _ string) (external.Result, error) {
			c.values[g.Name] = g.Spec.Message
			return external.Done(), fail(external.PhaseUpdate)
		},
		DeleteFunc: func(_ context.Context, c *fakeSystem, g *testapi.Gadget, _ string) (external.Result, error) {
			delete(c.values, g.Name)
			return external.Done(), fail(external.PhaseDelete)
		},
	}
}

func action(verb plug.Verb, message string) *plug.Action[*testapi.Gadget] {
	return plug.NewAction(verb, &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g", Generation: 1}, Spec: testapi.GadgetSpec{Message: message}}, logr.Discard())
}

// TestPhases: each verb runs exactly the phases the state calls for.
func TestPhases(t *testing.T) {
	ctx := context.Background()
	f := &fakeSystem{values: map[string]string{}}
	h := external.New(f.reconciler())
	steps := []struct {
		verb    plug.Verb
		message string
		calls   []string
		reason  string
	}{
		{plug.Add, "a", []string{"Read", "Create"}, "Created"},
		{plug.Reconcile, "a", []string{"Read"}, "InSync"},
		{plug.Modify, "b", []string{"Read", "Update"}, "Updated"},
		{plug.Delete, "b", []string{"Read", "Delete"}, ""},
		{plug.Delete, "b", []string{"Read"}, ""},
	}
	for _, s := range steps {
		f.calls = nil
		a := action(s.verb, s.message)
		run := map[plug.Verb]func(context.Context, *plug.Action[*testapi.Gadget]) error{
			plug.Add: h.Add, plug.Modify: h.Modify, plug.Reconcile: h.Reconcile, plug.Delete: h.Delete,
		}[s.verb]
		require.NoError(t, run(ctx, a))
		assert.Equal(t, s.calls, f.calls, "%s", s.verb)
		if s.reason != "" {
			assert.True(t, apis.IsTrue(a.Object, apis.Ready))
			assert.Equal(t, s.reason, a.Object.Status.Conditions[0].Reason)
		}
	}
	assert.Empty(t, f.values)
}

// TestFailedPhaseIsNamed: the default OnError wraps the error with its
// phase; nothing after the failed phase runs.
func TestFailedPhaseIsNamed(t *testing.T) {
	f := &fakeSystem{values: map[string]string{}, fail: external.PhaseCreate}
	a := action(plug.Add, "a")
	err := external.New(f.reconciler()).Add(context.Background(), a)
	require.EqualError(t, err, "external Create: Create broke")
	assert.False(t, apis.IsTrue(a.Object, apis.Ready))
	assert.Empty(t, a.Events())
}

func TestFuncsSayWhatIsMissing(t *testing.T) {
	h := external.New(external.Funcs[*testapi.Gadget, int, int]{})
	require.ErrorContains(t, h.Add(context.Background(), action(plug.Add, "a")), "ConfigureFunc is nil")
}
