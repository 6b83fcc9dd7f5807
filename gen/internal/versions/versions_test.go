package versions_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	shapesv1 "github.com/opgen-sdk/opgen/gen/internal/versions/apis/shapes/v1"
	shapesv2 "github.com/opgen-sdk/opgen/gen/internal/versions/apis/shapes/v2"
	"github.com/opgen-sdk/opgen/gen/internal/versions/internal/controller"
	"github.com/opgen-sdk/opgen/gen/internal/versions/pkg/generated/clientset/versioned"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/test/testkit"
)

var env = testenv.New(testenv.Options{CRDDirs: []string{"config/crd"}})

func TestMain(m *testing.M) { env.Main(m) }

// nextSecond waits until the clock passes the second of obj's newest
// managedFields entry: their times have second precision, and the next
// write must be visibly newer for the written-version rule to see it.
func nextSecond(t *testing.T, obj metav1.Object) {
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

// TestControllerPerVersion runs the generated Setup, which registers the
// controllers of Shape v1 and v2, and writes Shapes through both versions'
// generated clients: each is handled by the controller of the version it
// was last written in, moves when written in the other, and is never
// handled by both at once.
func TestControllerPerVersion(t *testing.T) {
	ns := env.Namespace(t)
	op, err := runtime.New(env.Config, runtime.Options{
		Name: "versions-operator", Namespaces: []string{ns},
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true},
		MetricsAddr:    "0", HealthAddr: "0",
		Logger: testr.New(t),
	})
	require.NoError(t, err)
	require.NoError(t, controller.Setup(op))
	testkit.Run(t, op)

	cs, err := versioned.NewForConfig(env.Config)
	require.NoError(t, err)
	v1, v2 := cs.ShapesV1().Shapes(ns), cs.ShapesV2().Shapes(ns)
	ctx := context.Background()
	by := metav1.CreateOptions{FieldManager: "writer"}
	_, err = v1.Create(ctx, &shapesv1.Shape{ObjectMeta: metav1.ObjectMeta{Name: "one"}, Spec: shapesv1.ShapeSpec{Size: 1}}, by)
	require.NoError(t, err)
	_, err = v2.Create(ctx, &shapesv2.Shape{ObjectMeta: metav1.ObjectMeta{Name: "two"}, Spec: shapesv2.ShapeSpec{Size: 1}}, by)
	require.NoError(t, err)

	rec := controller.Actions
	testkit.Eventually(t, "v1's controller to add one", func() bool { return len(rec.Of("v1", "one")) > 0 })
	testkit.Eventually(t, "v2's controller to add two", func() bool { return len(rec.Of("v2", "two")) > 0 })
	assert.Equal(t, plug.Add, rec.Of("v1", "one")[0].Verb)
	assert.Equal(t, plug.Add, rec.Of("v2", "two")[0].Verb)
	testkit.Eventually(t, "one's observedGeneration 1", func() bool {
		s, err := v1.Get(ctx, "one", metav1.GetOptions{})
		return err == nil && s.Status.ObservedGeneration == 1
	})

	// one, written in v2, moves to v2's controller.
	one, err := v1.Get(ctx, "one", metav1.GetOptions{})
	require.NoError(t, err)
	nextSecond(t, one)
	_, err = v2.Patch(ctx, "one", types.MergePatchType, []byte(`{"spec":{"size":2}}`), metav1.PatchOptions{FieldManager: "writer"})
	require.NoError(t, err)
	testkit.Eventually(t, "v2's controller to handle one", func() bool { return len(rec.Of("v2", "one")) > 0 })
	assert.Equal(t, plug.Modify, rec.Of("v2", "one")[0].Verb, "a moved object is not added again")
	for _, h := range rec.Of("v1", "one") {
		assert.Equal(t, int64(1), h.Generation, "v1's controller handled one after it moved: %+v", h)
	}

	// Deleted, it runs Delete in v2 only.
	handledInV1 := len(rec.Of("v1", "one"))
	require.NoError(t, v1.Delete(ctx, "one", metav1.DeleteOptions{}))
	testkit.Eventually(t, "one to go", func() bool { _, err := v1.Get(ctx, "one", metav1.GetOptions{}); return apierrors.IsNotFound(err) })
	assert.Contains(t, verbs(rec.Of("v2", "one")), plug.Delete)
	assert.Len(t, rec.Of("v1", "one"), handledInV1)
	assert.Empty(t, rec.Of("v1", "two"), "v1's controller never handles two")
	assert.Empty(t, rec.Overlaps(), "objects handled by both controllers at once")
}

func verbs(hs []controller.Handled) []plug.Verb {
	var out []plug.Verb
	for _, h := range hs {
		out = append(out, h.Verb)
	}
	return out
}
