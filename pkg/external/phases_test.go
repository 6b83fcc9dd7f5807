package external_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/pkg/external"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// session is the phases' shared data: Configure makes it, Read leaves the
// resource's ID in it, and Update and Delete use that ID.
type session struct {
	id    string
	calls []string
}

func sessionReconciler(exists bool, diff external.Diff, res external.Result) external.Funcs[*testapi.Gadget, *session, string] {
	return external.Funcs[*testapi.Gadget, *session, string]{
		ConfigureFunc: func(context.Context, *testapi.Gadget) (*session, error) { return &session{}, nil },
		ReadFunc: func(_ context.Context, s *session, g *testapi.Gadget) (string, bool, error) {
			s.id = "id-of-" + g.Name
			return "old", exists, nil
		},
		DiffFunc: func(*testapi.Gadget, string) external.Diff { return diff },
		CreateFunc: func(_ context.Context, s *session, _ *testapi.Gadget) (external.Result, error) {
			s.calls = append(s.calls, "Create")
			return res, nil
		},
		UpdateFunc: func(_ context.Context, s *session, _ *testapi.Gadget, _ string) (external.Result, error) {
			s.calls = append(s.calls, "Update "+s.id)
			return res, nil
		},
		DeleteFunc: func(_ context.Context, s *session, _ *testapi.Gadget, _ string) (external.Result, error) {
			s.calls = append(s.calls, "Delete "+s.id)
			return res, nil
		},
	}
}

// spy records the shared data of the last action.
type spy struct {
	external.Funcs[*testapi.Gadget, *session, string]
	last *session
}

func (s *spy) Configure(ctx context.Context, g *testapi.Gadget) (*session, error) {
	sess, err := s.Funcs.Configure(ctx, g)
	s.last = sess
	return sess, err
}

func gadgetAction(verb plug.Verb) *plug.Action[*testapi.Gadget] {
	return plug.NewAction(verb, &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g", Generation: 1}}, logr.Discard())
}

// TestPhaseResults: a phase's Result becomes the action's requeue:
// RequeueAfter(d) asks for d, RequeueNow for the smallest delay, Done for
// none.
func TestPhaseResults(t *testing.T) {
	for name, tc := range map[string]struct {
		res  external.Result
		want time.Duration
	}{
		"Done":         {external.Done(), 0},
		"RequeueAfter": {external.RequeueAfter(30 * time.Second), 30 * time.Second},
		"RequeueNow":   {external.RequeueNow(), time.Nanosecond},
	} {
		t.Run(name, func(t *testing.T) {
			h := external.New(sessionReconciler(false, external.Diff{}, tc.res))
			a := gadgetAction(plug.Add)
			require.NoError(t, h.Add(context.Background(), a))
			assert.Equal(t, tc.want, a.Requeue())
		})
	}
}

// TestDiffDecides: NeedUpdate updates, NeedCreate replaces (Delete then
// Create, with the changes in the event), neither is in sync; the ID Read
// left in the shared data reaches Update and Delete.
func TestDiffDecides(t *testing.T) {
	for name, tc := range map[string]struct {
		diff      external.Diff
		calls     []string
		reason    string
		eventNote string
	}{
		"update":  {external.Diff{NeedUpdate: true, Changes: []string{"size 1 → 2"}}, []string{"Update id-of-g"}, "Updated", "updated the external resource: size 1 → 2"},
		"replace": {external.Diff{NeedCreate: true, Changes: []string{"region a → b"}}, []string{"Delete id-of-g", "Create"}, "Created", "replaced the external resource: region a → b"},
		"in sync": {external.Diff{}, nil, "", ""},
	} {
		t.Run(name, func(t *testing.T) {
			s := &spy{Funcs: sessionReconciler(true, tc.diff, external.Done())}
			a := gadgetAction(plug.Modify)
			require.NoError(t, external.New[*testapi.Gadget, *session, string](s).Modify(context.Background(), a))
			assert.Equal(t, tc.calls, s.last.calls)
			if tc.reason == "" {
				assert.Empty(t, a.Events())
				return
			}
			require.Len(t, a.Events(), 1)
			assert.Equal(t, tc.reason, a.Events()[0].Reason)
			assert.Equal(t, tc.eventNote, a.Events()[0].Note)
		})
	}
}
