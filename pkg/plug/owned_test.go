package plug_test

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/opgen-sdk/opgen/pkg/plug"
)

var (
	cmGVK  = corev1.SchemeGroupVersion.WithKind("ConfigMap")
	jobGVK = batchv1.SchemeGroupVersion.WithKind("Job")
)

// A typed object is a declaration of its non-null fields, without status,
// with its kind from client-go's scheme.
func TestObject(t *testing.T) {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "run-1"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
		}}},
		Status: batchv1.JobStatus{Active: 1},
	}
	u, err := plug.AsUnstructured(plug.Object(job))
	require.NoError(t, err)
	assert.Equal(t, "batch/v1", u.GetAPIVersion())
	assert.Equal(t, "Job", u.GetKind())
	assert.NotContains(t, u.Object, "status")
	assert.NotContains(t, u.Object["metadata"], "creationTimestamp", "a JSON null is no field of the declaration")
	tmpl := u.Object["spec"].(map[string]any)["template"].(map[string]any)
	assert.NotContains(t, tmpl, "metadata", "an object of nulls alone is left out")

	_, err = plug.AsUnstructured(plug.Object(&struct{ corev1.ConfigMap }{}))
	assert.ErrorContains(t, err, "set its apiVersion and kind")
}

// An owned kind is pruned unless the controller retains it, and an action
// can decide otherwise either way.
func TestPrunePolicy(t *testing.T) {
	s := &fakeStore{owned: map[schema.GroupVersionKind]bool{cmGVK: true, jobGVK: true}}
	env := testEnv(&fakeClient{}, s, nil)
	env.Retain = []schema.GroupVersionKind{jobGVK}
	require.NoError(t, run(plug.NewAction(plug.Reconcile, newWidget(1, 1), logr.Discard()), nil, plug.ApplyOwned(env)))
	a := plug.NewAction(plug.Reconcile, newWidget(1, 1), logr.Discard())
	require.NoError(t, run(a, func(a *plug.Action[*widget]) error {
		a.SetPrunePolicy(jobGVK, plug.PruneUndeclared)
		a.SetPrunePolicy(cmGVK, plug.Retain)
		return nil
	}, plug.ApplyOwned(env)))
	require.Len(t, s.prunes, 2)
	assert.True(t, s.prunes[0](cmGVK))
	assert.False(t, s.prunes[0](jobGVK), "retained by the controller")
	assert.False(t, s.prunes[1](cmGVK), "retained by the action")
	assert.True(t, s.prunes[1](jobGVK), "pruned by the action")
}

// ApplyNow and CreateNow write at once, with the owner reference, and the
// child counts as declared; DeleteNow deletes with the propagation asked
// for and records an Event; without ApplyOwned in the pipeline they
// say so.
func TestWriteNow(t *testing.T) {
	s := &fakeStore{owned: map[schema.GroupVersionKind]bool{cmGVK: true}}
	r := &fakeRecorder{}
	env := testEnv(&fakeClient{}, s, r)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "now"}, Data: map[string]string{"k": "v"}}
	var got *corev1.ConfigMap
	a := plug.NewAction(plug.Reconcile, newWidget(1, 1), logr.Discard())
	require.NoError(t, run(a, func(a *plug.Action[*widget]) error {
		var err error
		if got, err = plug.CreateNow(context.Background(), a, cm); err != nil {
			return err
		}
		return plug.DeleteNow(context.Background(), a, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "ns", UID: "u-old"}}, "")
	}, plug.ApplyOwned(env)))
	assert.Equal(t, "v", got.Data["k"])
	assert.Equal(t, "ns", got.Namespace, "the owner's namespace")
	require.Len(t, got.OwnerReferences, 1)
	assert.Equal(t, "w", got.OwnerReferences[0].Name)
	assert.Equal(t, []plug.ObjectKey{{GVK: cmGVK, Namespace: "ns", Name: "old"}}, s.deleted)
	require.Len(t, s.pruned, 1)
	assert.True(t, s.pruned[0][plug.ObjectKey{GVK: cmGVK, Namespace: "ns", Name: "now"}], "a child created now is kept")
	assert.Contains(t, a.Events(), plug.Event{Type: corev1.EventTypeNormal, Reason: "DeletedChild", Action: "Delete", Note: "deleted ConfigMap old"})

	assert.Equal(t, []string{"apply uid-1", "delete uid-1"}, s.now, "the store is told which calls the handler made now, and for whom")

	_, err := plug.ApplyNow(context.Background(), plug.NewAction(plug.Reconcile, newWidget(1, 1), logr.Discard()), cm)
	assert.ErrorContains(t, err, "no ApplyOwned step")
}

// CreateNow's AlreadyExists is an answer to branch on: no Event; another
// failure records a Warning.
func TestCreateNowExistsIsNoWarning(t *testing.T) {
	s := &fakeStore{owned: map[schema.GroupVersionKind]bool{cmGVK: true}}
	env := testEnv(&fakeClient{}, s, &fakeRecorder{})
	a := plug.NewAction(plug.Reconcile, newWidget(1, 1), logr.Discard())
	require.NoError(t, run(a, func(a *plug.Action[*widget]) error {
		for _, name := range []string{"run", "run", "refused"} {
			_, err := plug.CreateNow(context.Background(), a, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}})
			if name == "run" && apierrors.IsAlreadyExists(err) {
				a.Normal("RunExists", "an earlier try created it")
			}
		}
		return nil
	}, plug.ApplyOwned(env)))
	var reasons []string
	for _, e := range a.Events() {
		reasons = append(reasons, e.Type+" "+e.Reason)
	}
	assert.Equal(t, []string{"Normal RunExists", "Warning CreateChildFailed"}, reasons)
}
