package plug_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/opgen-sdk/opgen/pkg/plug"
)

func TestPipelineOrderAndHalt(t *testing.T) {
	var trace []string
	step := func(name string, halt bool) plug.Step[*widget] {
		return plug.StepFunc[*widget](func(ctx context.Context, a *plug.Action[*widget], next plug.Next) error {
			trace = append(trace, name+">")
			if halt {
				a.Halt()
				return nil
			}
			err := next(ctx)
			trace = append(trace, "<"+name)
			return err
		})
	}
	a := plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard())
	require.NoError(t, plug.Pipeline[*widget]{step("a", false), step("b", false), step("c", false)}.Run(context.Background(), a))
	assert.Equal(t, []string{"a>", "b>", "c>", "<c", "<b", "<a"}, trace)

	trace = nil
	a = plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard())
	require.NoError(t, plug.Pipeline[*widget]{step("a", false), step("b", true), step("c", false)}.Run(context.Background(), a))
	assert.Equal(t, []string{"a>", "b>", "<a"}, trace)
	assert.True(t, a.Halted())
}

func TestActionObjectIsACopy(t *testing.T) {
	w := newWidget(1, 0)
	a := plug.NewAction(plug.Add, w, logr.Discard())
	a.Object.Status.Phase = "changed"
	a.Object.Labels = map[string]string{"x": "y"}
	assert.Empty(t, w.Status.Phase)
	assert.Nil(t, w.Labels)
	assert.Same(t, w, a.Observed())
}

func TestRequeueAfterKeepsTheEarliest(t *testing.T) {
	a := plug.NewAction(plug.Reconcile, newWidget(1, 1), logr.Discard())
	a.RequeueAfter(0)
	assert.Zero(t, a.Requeue())
	a.RequeueAfter(5e9)
	a.RequeueAfter(2e9)
	a.RequeueAfter(9e9)
	assert.EqualValues(t, 2e9, a.Requeue())
}

func TestTerminal(t *testing.T) {
	assert.NoError(t, plug.Terminal(nil))
	base := errors.New("bad spec")
	err := plug.Terminal(base)
	assert.True(t, plug.IsTerminal(err))
	assert.True(t, plug.IsTerminal(errors.Join(errors.New("x"), err)), "wrapped terminal errors stay terminal")
	assert.ErrorIs(t, err, base)
	assert.False(t, plug.IsTerminal(base))
}

func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	log := funcr.New(func(prefix, args string) { buf.WriteString(args + "\n") }, funcr.Options{Verbosity: 1})
	a := plug.NewAction(plug.Add, newWidget(1, 0), log)
	require.NoError(t, run(a, nil, plug.Logger[*widget]()))
	assert.Contains(t, buf.String(), `"msg"="handled"`)
	buf.Reset()
	a = plug.NewAction(plug.Add, newWidget(1, 0), log)
	require.Error(t, run(a, func(*plug.Action[*widget]) error { return plug.Terminal(errors.New("boom")) }, plug.Logger[*widget]()))
	assert.Contains(t, buf.String(), `"msg"="handler failed"`)
	assert.Contains(t, buf.String(), `"terminal"=true`)
}

func TestSkipObservedGenerations(t *testing.T) {
	tests := []struct {
		name               string
		verb               plug.Verb
		generation, obsGen int64
		wantHalt           bool
	}{
		{"listed verb, generation handled", plug.Modify, 2, 2, true},
		{"listed verb, new generation", plug.Modify, 3, 2, false},
		{"verb not listed", plug.Reconcile, 2, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran := false
			a := plug.NewAction(tt.verb, newWidget(tt.generation, tt.obsGen), logr.Discard())
			require.NoError(t, run(a, func(*plug.Action[*widget]) error { ran = true; return nil },
				plug.SkipObservedGenerations[*widget](plug.Add, plug.Modify)))
			assert.Equal(t, tt.wantHalt, a.Halted())
			assert.Equal(t, !tt.wantHalt, ran)
		})
	}
}

func TestAddMissingGVK(t *testing.T) {
	a := plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard())
	require.NoError(t, run(a, func(a *plug.Action[*widget]) error {
		assert.Equal(t, widgetGVK, a.Object.GroupVersionKind())
		return nil
	}, plug.AddMissingGVK[*widget](widgetGVK)))
	assert.Empty(t, a.Observed().Kind, "the cached object is not changed")
}

// A step may call next more than once: each call runs the rest of the
// pipeline again, from the step after it.
func TestPipelineNextTwice(t *testing.T) {
	var trace []string
	step := func(name string, times int) plug.Step[*widget] {
		return plug.StepFunc[*widget](func(ctx context.Context, a *plug.Action[*widget], next plug.Next) error {
			for range times {
				trace = append(trace, name)
				if err := next(ctx); err != nil {
					return err
				}
			}
			return nil
		})
	}
	a := plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard())
	require.NoError(t, plug.Pipeline[*widget]{step("a", 1), step("b", 2), step("c", 1)}.Run(context.Background(), a))
	assert.Equal(t, []string{"a", "b", "c", "b", "c"}, trace)
	require.NoError(t, plug.Pipeline[*widget]{}.Run(context.Background(), a), "an empty pipeline does nothing")
}

// ManagedByLabel's labels are shared by the actions until one adds its
// own: that action's labels are its alone.
func TestManagedByLabelShared(t *testing.T) {
	step := plug.ManagedByLabel[*widget]("test-operator")
	runWith := func(more map[string]string) map[string]string {
		a := plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard())
		require.NoError(t, plug.Pipeline[*widget]{step, plug.StepFunc[*widget](func(_ context.Context, a *plug.Action[*widget], _ plug.Next) error {
			if more != nil {
				a.LabelOwned(more)
			}
			return nil
		})}.Run(context.Background(), a))
		return a.OwnedLabels()
	}
	assert.Equal(t, map[string]string{plug.ManagedByLabelKey: "test-operator", "team": "a"}, runWith(map[string]string{"team": "a"}))
	assert.Equal(t, map[string]string{plug.ManagedByLabelKey: "test-operator"}, runWith(nil), "the first action's label is not in the next")
	assert.Equal(t, map[string]string{plug.ManagedByLabelKey: "b"}, runWith(map[string]string{plug.ManagedByLabelKey: "b"}))
	assert.Equal(t, map[string]string{plug.ManagedByLabelKey: "test-operator"}, runWith(nil))
}

func TestManagedByLabel(t *testing.T) {
	s := &fakeStore{owned: map[schema.GroupVersionKind]bool{corev1.SchemeGroupVersion.WithKind("ConfigMap"): true}}
	env := testEnv(&fakeClient{}, s, nil)
	a := plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard())
	require.NoError(t, run(a, func(a *plug.Action[*widget]) error {
		a.Own(corev1ac.ConfigMap("plain", ""), corev1ac.ConfigMap("labelled", "").WithLabels(map[string]string{plug.ManagedByLabelKey: "someone"}))
		return nil
	}, plug.ApplyOwned(env), plug.ManagedByLabel[*widget]("test-operator")))
	assert.Equal(t, map[string]string{plug.ManagedByLabelKey: "test-operator"}, a.OwnedLabels())
	require.Len(t, s.applied, 2)
	assert.Equal(t, "test-operator", s.applied[0].GetLabels()[plug.ManagedByLabelKey])
	assert.Equal(t, "someone", s.applied[1].GetLabels()[plug.ManagedByLabelKey], "a label the handler set is kept")
}

// calls records which method of a handler ran, and for which verb.
type calls []string

func (c *calls) rec(method string, a *plug.Action[*widget]) error {
	*c = append(*c, method+"("+string(a.Verb)+")")
	return nil
}

// reconciler has only Reconcile.
type reconciler struct{ calls }

func (r *reconciler) Reconcile(_ context.Context, a *plug.Action[*widget]) error {
	return r.rec("Reconcile", a)
}

// adder adds Add to reconciler.
type adder struct{ reconciler }

func (r *adder) Add(_ context.Context, a *plug.Action[*widget]) error { return r.rec("Add", a) }

// modifier adds Modify to reconciler.
type modifier struct{ reconciler }

func (r *modifier) Modify(_ context.Context, a *plug.Action[*widget]) error {
	return r.rec("Modify", a)
}

// full has every method.
type full struct{ reconciler }

func (r *full) Add(_ context.Context, a *plug.Action[*widget]) error { return r.rec("Add", a) }
func (r *full) Modify(_ context.Context, a *plug.Action[*widget]) error {
	return r.rec("Modify", a)
}
func (r *full) Delete(_ context.Context, a *plug.Action[*widget]) error {
	return r.rec("Delete", a)
}

func TestDelegate(t *testing.T) {
	verbs := []plug.Verb{plug.Add, plug.Modify, plug.Reconcile, plug.Delete}
	r, ad, m, f := &reconciler{}, &adder{}, &modifier{}, &full{}
	for _, tc := range []struct {
		name string
		h    plug.Handler[*widget]
		got  *calls
		want calls
	}{
		{"Reconcile only: every verb but Delete", r, &r.calls,
			calls{"Reconcile(Add)", "Reconcile(Modify)", "Reconcile(Reconcile)"}},
		{"Adder", ad, &ad.calls,
			calls{"Add(Add)", "Reconcile(Modify)", "Reconcile(Reconcile)"}},
		{"Modifier", m, &m.calls,
			calls{"Reconcile(Add)", "Modify(Modify)", "Reconcile(Reconcile)"}},
		{"every method", f, &f.calls,
			calls{"Add(Add)", "Modify(Modify)", "Reconcile(Reconcile)", "Delete(Delete)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			step := plug.Delegate(tc.h)
			for _, v := range verbs {
				require.NoError(t, plug.Pipeline[*widget]{step}.Run(context.Background(), plug.NewAction(v, newWidget(1, 0), logr.Discard())))
			}
			assert.Equal(t, tc.want, *tc.got)
		})
	}
}

func TestHandlerFuncs(t *testing.T) {
	var got []string
	rec := func(name string) func(context.Context, *plug.Action[*widget]) error {
		return func(_ context.Context, a *plug.Action[*widget]) error {
			got = append(got, name+"("+string(a.Verb)+")")
			return nil
		}
	}
	run := func(h plug.HandlerFuncs[*widget]) {
		for _, v := range []plug.Verb{plug.Add, plug.Modify, plug.Reconcile, plug.Delete} {
			require.NoError(t, plug.Pipeline[*widget]{plug.Delegate[*widget](h)}.Run(context.Background(), plug.NewAction(v, newWidget(1, 0), logr.Discard())))
		}
	}
	run(plug.HandlerFuncs[*widget]{OnReconcile: rec("OnReconcile")})
	assert.Equal(t, []string{"OnReconcile(Add)", "OnReconcile(Modify)", "OnReconcile(Reconcile)"}, got)

	got = nil
	run(plug.HandlerFuncs[*widget]{OnAdd: rec("OnAdd"), OnModify: rec("OnModify"), OnReconcile: rec("OnReconcile")})
	assert.Equal(t, []string{"OnAdd(Add)", "OnModify(Modify)", "OnReconcile(Reconcile)"}, got)

	_, deletes := any(plug.HandlerFuncs[*widget]{}).(plug.Deleter[*widget])
	assert.False(t, deletes, "HandlerFuncs must not turn on the finalizer")
}

// panicker panics in Reconcile.
type panicker struct{}

func (panicker) Reconcile(context.Context, *plug.Action[*widget]) error { panic("boom") }

// TestDelegateTurnsPanicsIntoErrors: a panic is an error inside the
// pipeline, so the steps around the handler see it (here: a Warning).
func TestDelegateTurnsPanicsIntoErrors(t *testing.T) {
	r := &fakeRecorder{}
	err := plug.Pipeline[*widget]{plug.RecordEvents[*widget](r), plug.Delegate[*widget](panicker{})}.Run(context.Background(), plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard()))
	require.ErrorContains(t, err, "handler panicked: boom")
	require.Len(t, r.events, 1)
	assert.Equal(t, corev1.EventTypeWarning, r.events[0].typ)
}

func TestRecordEvents(t *testing.T) {
	r := &fakeRecorder{}
	a := plug.NewAction(plug.Modify, newWidget(2, 1), logr.Discard())
	err := run(a, func(a *plug.Action[*widget]) error {
		a.Normal("Scaled", "to %d", 3)
		return errors.New("quota exceeded")
	}, plug.RecordEvents[*widget](r))
	require.Error(t, err)
	assert.Equal(t, []event{
		{corev1.EventTypeWarning, plug.ReasonFailed, "Modify", "quota exceeded"},
	}, r.events, "a failed action's Normal events announce what did not happen: dropped")

	r = &fakeRecorder{}
	require.NoError(t, run(plug.NewAction(plug.Modify, newWidget(2, 1), logr.Discard()), func(a *plug.Action[*widget]) error {
		a.Normal("Scaled", "to %d", 3)
		return nil
	}, plug.RecordEvents[*widget](r)))
	assert.Equal(t, []event{{corev1.EventTypeNormal, "Scaled", "Modify", "to 3"}}, r.events)

	// Notes are cut to the server's 1 KiB limit, on a rune boundary.
	r = &fakeRecorder{}
	long := strings.Repeat("é", 1000)
	_ = run(plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard()), func(*plug.Action[*widget]) error {
		return errors.New(long)
	}, plug.RecordEvents[*widget](r))
	require.Len(t, r.events, 1)
	assert.LessOrEqual(t, len(r.events[0].note), 1024)
	assert.True(t, utf8.ValidString(r.events[0].note))
	assert.True(t, strings.HasSuffix(r.events[0].note, "..."))

	r = &fakeRecorder{}
	_ = run(plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard()), func(*plug.Action[*widget]) error {
		return plug.Terminal(errors.New("bad"))
	}, plug.RecordEvents[*widget](r))
	require.Len(t, r.events, 1)
	assert.Equal(t, plug.ReasonTerminal, r.events[0].reason)
}

func TestFinalizer(t *testing.T) {
	t.Run("added before the first Add", func(t *testing.T) {
		c := &fakeClient{}
		a := plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard())
		patchesBeforeHandler := -1
		require.NoError(t, run(a, func(a *plug.Action[*widget]) error {
			patchesBeforeHandler = len(c.patches)
			assert.Contains(t, a.Object.Finalizers, "test.opgen.dev/finalizer")
			return nil
		}, plug.Finalizer(testEnv(c, nil, nil))))
		require.Equal(t, 1, patchesBeforeHandler)
		p := c.patches[0]
		assert.Equal(t, types.ApplyPatchType, p.pt)
		assert.JSONEq(t, `{"apiVersion":"test.opgen.dev/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","uid":"uid-1","finalizers":["test.opgen.dev/finalizer"]}}`, p.body)
		assert.Equal(t, "test-operator", p.opts.FieldManager)
		assert.Empty(t, p.subresource)
	})
	t.Run("not added twice, nor without Delete", func(t *testing.T) {
		c := &fakeClient{}
		w := newWidget(1, 1)
		w.Finalizers = []string{"test.opgen.dev/finalizer"}
		require.NoError(t, run(plug.NewAction(plug.Reconcile, w, logr.Discard()), nil, plug.Finalizer(testEnv(c, nil, nil))))
		env := testEnv(c, nil, nil)
		env.Deletes = false
		require.NoError(t, run(plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard()), nil, plug.Finalizer(env)))
		assert.Empty(t, c.patches)
	})
	t.Run("removed after Delete succeeded, kept after it failed", func(t *testing.T) {
		c := &fakeClient{}
		w := newWidget(1, 1)
		w.Finalizers = []string{"test.opgen.dev/finalizer"}
		require.Error(t, run(plug.NewAction(plug.Delete, w, logr.Discard()), func(*plug.Action[*widget]) error { return errors.New("later") }, plug.Finalizer(testEnv(c, nil, nil))))
		assert.Empty(t, c.patches)
		require.NoError(t, run(plug.NewAction(plug.Delete, w, logr.Discard()), nil, plug.Finalizer(testEnv(c, nil, nil))))
		require.Len(t, c.patches, 1)
		assert.JSONEq(t, `{"apiVersion":"test.opgen.dev/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","uid":"uid-1"}}`, c.patches[0].body)
	})
	t.Run("removed by JSON patch when another manager holds it", func(t *testing.T) {
		c := &fakeClient{reply: func(p patch) (*widget, error) {
			return &widget{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{"other", "test.opgen.dev/finalizer"}}}, nil
		}}
		w := newWidget(1, 1)
		w.Finalizers = []string{"other", "test.opgen.dev/finalizer"}
		require.NoError(t, run(plug.NewAction(plug.Delete, w, logr.Discard()), nil, plug.Finalizer(testEnv(c, nil, nil))))
		require.Len(t, c.patches, 2)
		assert.Equal(t, types.JSONPatchType, c.patches[1].pt)
		assert.JSONEq(t, `[{"op":"test","path":"/metadata/uid","value":"uid-1"},{"op":"test","path":"/metadata/finalizers","value":["other","test.opgen.dev/finalizer"]},{"op":"replace","path":"/metadata/finalizers","value":["other"]}]`, c.patches[1].body)
	})
}
