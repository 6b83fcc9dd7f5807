package plug_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
)

func statusBody(t *testing.T, p patch) map[string]any {
	t.Helper()
	var body map[string]any
	require.NoError(t, json.Unmarshal([]byte(p.body), &body))
	return body["status"].(map[string]any)
}

func TestApplyStatus(t *testing.T) {
	t.Run("written when changed, with observedGeneration: the changed values merged", func(t *testing.T) {
		c := &fakeClient{}
		a := plug.NewAction(plug.Modify, newWidget(3, 2), logr.Discard())
		require.NoError(t, run(a, func(a *plug.Action[*widget]) error { a.Object.Status.Phase = "Ready"; return nil }, plug.ApplyStatus(testEnv(c, nil, nil))))
		require.Len(t, c.patches, 1)
		p := c.patches[0]
		assert.Equal(t, []string{"status"}, p.subresource)
		assert.Equal(t, types.MergePatchType, p.pt)
		assert.Equal(t, "test-operator", p.opts.FieldManager)
		assert.JSONEq(t, `{"status":{"observedGeneration":3,"phase":"Ready"}}`, p.body)
	})
	t.Run("applied whole when a list changes", func(t *testing.T) {
		for name, change := range map[string]func(*widget){
			"a condition":        func(w *widget) { apis.MarkReady(w, "Up", "") },
			"conditions cleared": func(w *widget) { w.Status.Conditions = nil },
		} {
			c := &fakeClient{}
			w := newWidget(3, 3)
			w.Status.Phase = "Ready"
			apis.MarkDegraded(w, "Broken", "")
			a := plug.NewAction(plug.Reconcile, w, logr.Discard())
			require.NoError(t, run(a, func(a *plug.Action[*widget]) error { change(a.Object); return nil }, plug.ApplyStatus(testEnv(c, nil, nil))), name)
			require.Len(t, c.patches, 1, name)
			p := c.patches[0]
			assert.Equal(t, types.ApplyPatchType, p.pt, name)
			assert.True(t, *p.opts.Force, name)
			assert.Equal(t, 3.0, statusBody(t, p)["observedGeneration"], name)
		}
	})
	t.Run("not written when unchanged", func(t *testing.T) {
		c := &fakeClient{}
		w := newWidget(3, 3)
		w.Status.Phase = "Ready"
		a := plug.NewAction(plug.Reconcile, w, logr.Discard())
		require.NoError(t, run(a, func(a *plug.Action[*widget]) error { a.Object.Status.Phase = "Ready"; return nil }, plug.ApplyStatus(testEnv(c, nil, nil))))
		assert.Empty(t, c.patches)
	})
	t.Run("not written when only its Go value differs, not its JSON", func(t *testing.T) {
		c := &fakeClient{}
		w := newWidget(3, 3)
		w.Status.Phase = "Ready"
		a := plug.NewAction(plug.Reconcile, w, logr.Discard())
		require.NoError(t, run(a, func(a *plug.Action[*widget]) error {
			a.Object.Status.Conditions = []metav1.Condition{} // nil in the cache; omitted from the JSON either way
			return nil
		}, plug.ApplyStatus(testEnv(c, nil, nil))))
		assert.Empty(t, c.patches)
	})
	t.Run("failure: Degraded written, observedGeneration kept, error returned", func(t *testing.T) {
		c := &fakeClient{}
		a := plug.NewAction(plug.Modify, newWidget(3, 2), logr.Discard())
		err := run(a, func(*plug.Action[*widget]) error { return errors.New("no quota") }, plug.ApplyStatus(testEnv(c, nil, nil)))
		require.EqualError(t, err, "no quota")
		require.Len(t, c.patches, 1)
		st := statusBody(t, c.patches[0])
		assert.Equal(t, 2.0, st["observedGeneration"])
		assert.True(t, apis.IsTrue(a.Object, apis.Degraded))
		assert.False(t, apis.IsTrue(a.Object, apis.Ready))
	})
	t.Run("failure: a Degraded reason the handler set stands", func(t *testing.T) {
		c := &fakeClient{}
		a := plug.NewAction(plug.Modify, newWidget(3, 2), logr.Discard())
		err := run(a, func(a *plug.Action[*widget]) error {
			apis.MarkDegraded(a.Object, "QuotaExceeded", "the namespace has no quota left")
			return errors.New("no quota")
		}, plug.ApplyStatus(testEnv(c, nil, nil)))
		require.EqualError(t, err, "no quota")
		cond := findCond(a.Object.GetConditions(), apis.Degraded)
		require.NotNil(t, cond)
		assert.Equal(t, "QuotaExceeded", cond.Reason)

		b := plug.NewAction(plug.Modify, a.Object, logr.Discard()) // the next try: the cache shows that reason
		require.Error(t, run(b, func(*plug.Action[*widget]) error { return errors.New("another failure") }, plug.ApplyStatus(testEnv(c, nil, nil))))
		assert.Equal(t, plug.ReasonReconcileFailed, findCond(b.Object.GetConditions(), apis.Degraded).Reason, "a reason of an earlier action gives way")
	})
	t.Run("success clears the Degraded it set", func(t *testing.T) {
		c := &fakeClient{}
		w := newWidget(3, 2)
		apis.MarkDegraded(w, plug.ReasonReconcileFailed, "no quota")
		a := plug.NewAction(plug.Modify, w, logr.Discard())
		require.NoError(t, run(a, nil, plug.ApplyStatus(testEnv(c, nil, nil))))
		assert.False(t, apis.IsTrue(a.Object, apis.Degraded))
		assert.Len(t, c.patches, 1)
	})
	t.Run("the same write is not repeated while the cache lags", func(t *testing.T) {
		c := &fakeClient{}
		mem := &plug.Memory{}
		for range 2 {
			a := plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard()) // the cache still shows the old status
			a.SetMemory(mem)
			require.NoError(t, run(a, nil, plug.ApplyStatus(testEnv(c, nil, nil))))
		}
		assert.Len(t, c.patches, 1)
	})
	t.Run("a foreign edit that puts back the replaced status is reverted", func(t *testing.T) {
		c := &fakeClient{}
		mem := &plug.Memory{}
		for _, rv := range []string{"10", "12"} { // 11 was our write, 12 the foreign edit
			w := newWidget(1, 0) // the cache shows the old status both times
			w.ResourceVersion = rv
			a := plug.NewAction(plug.Add, w, logr.Discard())
			a.SetMemory(mem)
			require.NoError(t, run(a, nil, plug.ApplyStatus(testEnv(c, nil, nil))))
		}
		assert.Len(t, c.patches, 2, "a newer version of the object is judged afresh")
	})
	t.Run("halted actions write nothing", func(t *testing.T) {
		c := &fakeClient{}
		a := plug.NewAction(plug.Modify, newWidget(3, 2), logr.Discard())
		require.NoError(t, run(a, nil, plug.ApplyStatus(testEnv(c, nil, nil)), plug.StepFunc[*widget](func(_ context.Context, a *plug.Action[*widget], _ plug.Next) error {
			a.Halt()
			return nil
		})))
		assert.Empty(t, c.patches)
	})
}

func TestApplyOwned(t *testing.T) {
	cmGVK := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	declare := func(a *plug.Action[*widget]) error {
		a.Own(corev1ac.ConfigMap("cm", "").WithData(map[string]string{"k": "v"}))
		return nil
	}
	t.Run("owner reference, namespace and hash; skipped when unchanged", func(t *testing.T) {
		s := &fakeStore{owned: map[schema.GroupVersionKind]bool{cmGVK: true}}
		for range 2 {
			require.NoError(t, run(plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard()), declare, plug.ApplyOwned(testEnv(&fakeClient{}, s, nil))))
		}
		require.Len(t, s.applied, 1, "the second, identical declaration is skipped")
		u := s.applied[0]
		assert.Equal(t, "ns", u.GetNamespace())
		refs := u.GetOwnerReferences()
		require.Len(t, refs, 1)
		assert.Equal(t, metav1.OwnerReference{APIVersion: "test.opgen.dev/v1", Kind: "Widget", Name: "w", UID: "uid-1", Controller: ptrTrue(), BlockOwnerDeletion: ptrTrue()}, refs[0])
		assert.Len(t, u.GetAnnotations()[plug.AppliedHashAnnotation], 24)
		require.Len(t, s.pruned, 2)
		assert.Equal(t, map[plug.ObjectKey]bool{{GVK: cmGVK, Namespace: "ns", Name: "cm"}: true}, s.pruned[0])
	})
	t.Run("the deprecated Env.Descendants still serves", func(t *testing.T) {
		s := &fakeStore{owned: map[schema.GroupVersionKind]bool{cmGVK: true}}
		env := testEnv(&fakeClient{}, nil, nil)
		env.Descendants = s
		require.NoError(t, run(plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard()), declare, plug.ApplyOwned(env)))
		assert.Len(t, s.applied, 1)
	})
	t.Run("a kind not owned fails", func(t *testing.T) {
		s := &fakeStore{}
		err := run(plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard()), declare, plug.ApplyOwned(testEnv(&fakeClient{}, s, nil)))
		require.ErrorContains(t, err, "not owned")
	})
	t.Run("nothing applied or pruned on failure or Delete", func(t *testing.T) {
		s := &fakeStore{owned: map[schema.GroupVersionKind]bool{cmGVK: true}}
		_ = run(plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard()), func(a *plug.Action[*widget]) error {
			_ = declare(a)
			return errors.New("failed")
		}, plug.ApplyOwned(testEnv(&fakeClient{}, s, nil)))
		require.NoError(t, run(plug.NewAction(plug.Delete, newWidget(1, 0), logr.Discard()), declare, plug.ApplyOwned(testEnv(&fakeClient{}, s, nil))))
		assert.Empty(t, s.applied)
		assert.Empty(t, s.pruned)
	})
	t.Run("declaring nothing prunes everything", func(t *testing.T) {
		s := &fakeStore{owned: map[schema.GroupVersionKind]bool{cmGVK: true}}
		require.NoError(t, run(plug.NewAction(plug.Reconcile, newWidget(1, 1), logr.Discard()), nil, plug.ApplyOwned(testEnv(&fakeClient{}, s, nil))))
		require.Len(t, s.pruned, 1)
		assert.Empty(t, s.pruned[0])
	})
	t.Run("the hash covers the body, the owner and the labels", func(t *testing.T) {
		hashes := map[string]bool{}
		for _, variant := range []func(a *plug.Action[*widget]){
			func(a *plug.Action[*widget]) {},
			func(a *plug.Action[*widget]) { a.LabelOwned(map[string]string{"x": "y"}) },
			func(a *plug.Action[*widget]) { a.Object.UID = "uid-2" },
		} {
			s := &fakeStore{owned: map[schema.GroupVersionKind]bool{cmGVK: true}}
			a := plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard())
			variant(a)
			require.NoError(t, run(a, declare, plug.ApplyOwned(testEnv(&fakeClient{}, s, nil))))
			require.Len(t, s.applied, 1)
			hashes[s.applied[0].GetAnnotations()[plug.AppliedHashAnnotation]] = true
		}
		assert.Len(t, hashes, 3)
	})
	t.Run("declaring twice fails", func(t *testing.T) {
		s := &fakeStore{owned: map[schema.GroupVersionKind]bool{cmGVK: true}}
		err := run(plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard()), func(a *plug.Action[*widget]) error {
			_ = declare(a)
			return declare(a)
		}, plug.ApplyOwned(testEnv(&fakeClient{}, s, nil)))
		require.ErrorContains(t, err, "twice")
	})
}

func ptrTrue() *bool { b := true; return &b }

func findCond(cs []metav1.Condition, typ string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}
