package runtime_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/preview"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// writePaths is the handler of TestPreviewCoversEveryWritePath. Version 1
// sets the cluster up: a ConfigMap per Gadget, and two more for the
// Gadgets named pruned and deletenow. Version 2 takes, on the Gadget named
// for it, one write path of the runtime.
func writePaths(op *runtime.Operator, version int, extraUID *types.UID) actionFunc {
	cm := func(name, msg string) *corev1ac.ConfigMapApplyConfiguration {
		return corev1ac.ConfigMap(name, "").WithData(map[string]string{"message": msg})
	}
	return func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
		name, ns := a.Object.Name, a.Object.Namespace
		a.Object.Status.Phase = "v1"
		msg := "v1"
		switch {
		case name == "pruned" && version == 1:
			a.Own(cm("pruned-old", "v1"))
		case name == "deletenow":
			a.Own(cm("deletenow-extra", "v1"))
			if version == 2 {
				extra := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
					ObjectMeta: metav1.ObjectMeta{Name: "deletenow-extra", Namespace: ns, UID: *extraUID}}
				if err := plug.DeleteNow(ctx, a, extra, ""); err != nil {
					return err
				}
			}
		case version == 1:
		case name == "status":
			a.Object.Status.Phase = "v2"
		case name == "owned":
			msg = "v2"
		case name == "events":
			a.Normal("Previewed", "an Event of the action")
		case name == "recorder":
			op.Recorder().Eventf(a.Object, nil, corev1.EventTypeNormal, "Recorded", "Preview", "an Event of the recorder")
		case name == "createnow":
			if _, err := plug.CreateNow(ctx, a, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "createnow-job", Namespace: ns}}); err != nil {
				return err
			}
		case name == "applynow":
			if _, err := plug.ApplyNow(ctx, a, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "applynow-now", Namespace: ns}, Data: map[string]string{"a": "b"}}); err != nil {
				return err
			}
		case name == "ownclient":
			cs, err := kubernetes.NewForConfig(op.RESTConfig())
			if err != nil {
				return err
			}
			made := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ownclient-made"}}
			if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, made, metav1.CreateOptions{}); err != nil {
				return err
			}
		case name == "failing":
			return errors.New("this handler fails")
		}
		a.Own(cm(name+"-cm", msg))
		return nil
	}
}

// TestPreviewCoversEveryWritePath runs, as a preview, a handler that takes
// every write path the runtime has, and checks that each shows in the
// report and that the API server stored nothing.
func TestPreviewCoversEveryWritePath(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	names := []string{"status", "owned", "pruned", "deleting", "events", "recorder", "createnow", "applynow", "deletenow", "ownclient", "failing"}
	h := newOperator(t, ns, nil, runtime.Options{})
	require.NoError(t, registerGadgets(h, writePaths(h.op, 1, nil)))
	h.start()
	for _, name := range names {
		createGadget(t, ns, name, testapi.GadgetSpec{})
	}
	eventually(t, "version 1 to converge", func() bool {
		objs := stored(t, ns)
		for _, name := range names {
			if g := objs["gadgets/"+name]; g == nil || field(g, "status", "phase") != "v1" || objs["configmaps/"+name+"-cm"] == nil {
				return false
			}
		}
		return objs["configmaps/pruned-old"] != nil && objs["configmaps/deletenow-extra"] != nil
	})
	require.NoError(t, h.stop())
	// While no operator runs: a new Gadget, which lacks the finalizer, and
	// a deleted one, which holds it.
	createGadget(t, ns, "fresh", testapi.GadgetSpec{})
	require.NoError(t, gadgetClient(t, ns).Delete(context.Background(), "deleting", metav1.DeleteOptions{}))
	quietEvents(t, ns)
	before := stored(t, ns)
	extraUID := types.UID(field(before["configmaps/deletenow-extra"], "metadata", "uid").(string))

	r, err := runPreview(t, ns, func(op *runtime.Operator) actionFunc { return writePaths(op, 2, &extraUID) })
	t.Logf("the report:\n%s", report(r))
	require.ErrorIs(t, err, runtime.ErrPreviewChanges)
	require.ErrorIs(t, err, runtime.ErrPreviewFailed, "the failing handler")
	assert.Equal(t, versions(before), versions(stored(t, ns)), "the API server stored nothing: no object written, no Event")

	for _, tc := range []struct {
		path string
		in   func(preview.Report) bool
	}{
		{"status apply", changed("Gadget", "status", "status.phase")},
		{"owned apply", changed("ConfigMap", "owned-cm", "data.message")},
		{"owned prune", wrote("ConfigMap", "pruned-old", "delete")},
		{"finalizer added to a new object", changed("Gadget", "fresh", "metadata.finalizers")},
		{"finalizer removed by Delete", wrote("Gadget", "deleting", "patch")},
		{"Event of the action (a.Normal)", emitted("Normal Previewed on Gadget " + ns + "/events")},
		{"Event of the recorder", emitted("Normal Recorded on Gadget " + ns + "/recorder")},
		{"plug.CreateNow", wrote("ConfigMap", "createnow-job", "create")},
		{"plug.ApplyNow", changed("ConfigMap", "applynow-now", "data.a")},
		{"plug.DeleteNow", wrote("ConfigMap", "deletenow-extra", "delete")},
		{"a client of the handler's own, from Operator.RESTConfig", wrote("ConfigMap", "ownclient-made", "create")},
		{"Warning Event of a failed action", emitted("Warning Failed on Gadget " + ns + "/failing")},
		{"status of a failed action", changed("Gadget", "failing", "status.conditions")},
	} {
		t.Run(tc.path, func(t *testing.T) {
			assert.True(t, tc.in(r), "not in the report:\n%s", report(r))
		})
	}
	assert.Len(t, r.Failures, 1, "the failing handler")
}

// registerGadgets registers fn, with a Delete, owning ConfigMaps.
func registerGadgets(h *harness, fn actionFunc) error {
	_, err := runtime.Register(h.op, h.kind, plug.Handler[*testapi.Gadget](&deleter{handler{calls: &calls{}, fn: fn}}), ownsConfigMaps)
	return err
}

func object(r preview.Report, kind, name string) (preview.Object, bool) {
	i := slices.IndexFunc(r.Objects, func(o preview.Object) bool { return o.Kind == kind && o.Name == name })
	if i < 0 {
		return preview.Object{}, false
	}
	return r.Objects[i], true
}

// changed: the report changes path of the object.
func changed(kind, name, path string) func(preview.Report) bool {
	return func(r preview.Report) bool {
		o, ok := object(r, kind, name)
		return ok && slices.ContainsFunc(o.Fields, func(f preview.Field) bool { return f.Path == path })
	}
}

// wrote: the report has a write of verb to the object.
func wrote(kind, name, verb string) func(preview.Report) bool {
	return func(r preview.Report) bool {
		o, ok := object(r, kind, name)
		return ok && slices.Contains(o.Verbs, verb)
	}
}

// emitted: the report has an Event that reads so.
func emitted(event string) func(preview.Report) bool {
	return func(r preview.Report) bool {
		return slices.ContainsFunc(r.Events, func(e string) bool { return strings.Contains(e, "would emit Event "+event+":") })
	}
}

func report(r preview.Report) string {
	var b strings.Builder
	_ = r.Write(&b, "yaml")
	return b.String()
}
