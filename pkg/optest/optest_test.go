package optest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/opgen-sdk/opgen/pkg/optest"
)

var kit = optest.New(optest.Options{FakeClock: true})

func TestMain(m *testing.M) { kit.Main(m) }

// fatalTB records the failure of a wait instead of ending the test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	panic(f)
}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}

func failure(t *testing.T, wait func(testing.TB)) string {
	t.Helper()
	f := &fatalTB{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil && r != any(f) {
				panic(r)
			}
		}()
		wait(f)
	}()
	return f.msg
}

func TestWaitsFindOwnedObjectsAndDeletions(t *testing.T) {
	ctx := context.Background()
	ns := kit.Namespace(t)
	cms := kit.Clientset.CoreV1().ConfigMaps(ns)
	owner, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	get := func(ctx context.Context) (*corev1.ConfigMap, error) {
		return cms.Get(ctx, "owned", metav1.GetOptions{})
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		ctrl := true
		_, _ = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owned", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: &ctrl,
		}}}}, metav1.CreateOptions{})
	}()
	owned := optest.WaitForOwned(t, owner, get)
	assert.Equal(t, owner.UID, metav1.GetControllerOf(owned).UID)

	_, err = kit.Clientset.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
	assert.NoError(t, err, "a test namespace has the default ServiceAccount")

	require.NoError(t, cms.Delete(ctx, "owned", metav1.DeleteOptions{}))
	optest.WaitForDeletion(t, "the owned ConfigMap", get)
}

func TestAFailedWaitNamesWhatItWaitedFor(t *testing.T) {
	old := optest.WaitTimeout
	optest.WaitTimeout = 300 * time.Millisecond
	t.Cleanup(func() { optest.WaitTimeout = old })
	ns := kit.Namespace(t)
	get := func(ctx context.Context) (*corev1.ConfigMap, error) {
		return kit.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, "missing", metav1.GetOptions{})
	}
	msg := failure(t, func(tb testing.TB) { optest.WaitFor(tb, "the missing ConfigMap", get, nil) })
	assert.Contains(t, msg, "in vain for the missing ConfigMap")
	assert.Contains(t, msg, `configmaps "missing" not found`, "the last error is in the message")

	msg = failure(t, func(tb testing.TB) {
		optest.WaitForDeletion(tb, "the test namespace", func(ctx context.Context) (*corev1.Namespace, error) {
			return kit.Clientset.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		})
	})
	assert.Contains(t, msg, "in vain for the deletion of the test namespace")
}

// Within bounds one wait; Consistently fails the first time its condition
// does not hold, naming it.
func TestWithinAndConsistently(t *testing.T) {
	ns := kit.Namespace(t)
	get := func(ctx context.Context) (*corev1.ConfigMap, error) {
		return kit.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, "missing", metav1.GetOptions{})
	}
	start := time.Now()
	msg := failure(t, func(tb testing.TB) {
		optest.WaitFor(tb, "the missing ConfigMap", get, nil, optest.Within(200*time.Millisecond))
	})
	assert.Contains(t, msg, "in vain for the missing ConfigMap")
	assert.Less(t, time.Since(start), 10*time.Second, "Within, not WaitTimeout, bounded the wait")

	absent := func(ctx context.Context) (bool, error) {
		_, err := get(ctx)
		return apierrors.IsNotFound(err), nil
	}
	optest.Consistently(t, "the ConfigMap staying absent", 200*time.Millisecond, absent, optest.Every(50*time.Millisecond))
	go func() {
		time.Sleep(100 * time.Millisecond)
		_, _ = kit.Clientset.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "missing"}}, metav1.CreateOptions{})
	}()
	msg = failure(t, func(tb testing.TB) { optest.Consistently(tb, "the ConfigMap staying absent", 5*time.Second, absent) })
	assert.Contains(t, msg, "the ConfigMap staying absent did not hold after")
}

// Every failed wait shows the last state its condition saw, as YAML
// without managedFields, and how long it waited; Every sets how often
// Consistently checks.
func TestAFailedWaitShowsWhatItSaw(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cms := kit.Clientset.CoreV1().ConfigMaps(kit.Namespace(t))
	_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "seen"}, Data: map[string]string{"phase": "Pending"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	get := func(ctx context.Context) (*corev1.ConfigMap, error) { return cms.Get(ctx, "seen", metav1.GetOptions{}) }
	ready := func(cm *corev1.ConfigMap) bool { return cm.Data["phase"] == "Ready" }

	msg := failure(t, func(tb testing.TB) {
		optest.WaitFor(tb, "the ConfigMap Ready", get, ready, optest.Within(300*time.Millisecond))
	})
	assert.Regexp(t, `^waited \d+ms in vain for the ConfigMap Ready; last state seen, \d+ms after the start:\n`, msg)
	assert.Contains(t, msg, "phase: Pending", "the object as it was last seen")
	assert.Contains(t, msg, "name: seen")
	assert.NotContains(t, msg, "managedFields")

	var checks int
	pending := func(ctx context.Context) (bool, error) {
		checks++
		cm, err := get(ctx)
		if err != nil {
			return false, err
		}
		optest.Saw(ctx, cm)
		return !ready(cm), nil
	}
	optest.Consistently(t, "the ConfigMap Pending", 500*time.Millisecond, pending, optest.Every(100*time.Millisecond))
	assert.LessOrEqual(t, checks, 7, "checked every 100ms for 500ms")
	_, err = cms.Patch(ctx, "seen", types.MergePatchType, []byte(`{"data":{"phase":"Ready"}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	msg = failure(t, func(tb testing.TB) { optest.Consistently(tb, "the ConfigMap Pending", time.Minute, pending) })
	assert.Regexp(t, `^the ConfigMap Pending did not hold after \d+ms \(checked every 100ms\); last state seen`, msg)
	assert.Contains(t, msg, "phase: Ready", "the state that broke it")
}

// Kit.Clock starts each test from the real time, however far an earlier
// test (or an earlier run of -count=N) stepped it.
func TestClockStartsFromNowInEachTest(t *testing.T) {
	for _, name := range []string{"steps five hours", "starts from now again"} {
		t.Run(name, func(t *testing.T) {
			clock := kit.Clock(t)
			assert.WithinDuration(t, time.Now(), clock.Now(), time.Minute)
			clock.Step(5 * time.Hour)
			assert.WithinDuration(t, time.Now().Add(5*time.Hour), clock.Now(), time.Minute)
		})
	}
}

// ProfileAPIServer on the shared control plane runs the namespace
// controller, as docs/testing.md says: a deleted namespace goes away with
// its objects.
func TestProfileAPIServerRemovesDeletedNamespaces(t *testing.T) {
	t.Parallel()
	if kit.Env == nil || !kit.Env.Shared() {
		t.Skip("a private control plane of ProfileAPIServer runs no namespace controller")
	}
	ctx := context.Background()
	ns, err := kit.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "gone-"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = kit.Clientset.CoreV1().ConfigMaps(ns.Name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, kit.Clientset.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}))
	optest.WaitForDeletion(t, "the deleted namespace", func(ctx context.Context) (*corev1.Namespace, error) {
		return kit.Clientset.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
	})
}
