// Package testkit is what the two test packages of the harness's testkit
// benchmark share: the body of their tests, so that envtestkit
// (controller-runtime's envtest) and optestkit (opgen's optest) do exactly
// the same thing against the API server, and the mark of the first test's
// start, which the harness reads.
//
// The packages start a control plane, so they run only when the harness
// sets EnvFirst; in a plain `go test ./...` their tests skip and say so.
package testkit

import (
	"context"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// EnvFirst names the file the first test writes its start time to (Unix
// nanoseconds, decimal). Set, it also turns the packages' tests on.
const EnvFirst = "BENCH_TESTKIT_FIRST"

// Tests is how many tests each package has.
const Tests = 20

// SkipReason is why a test skips when EnvFirst is not set.
const SkipReason = "the testkit benchmark's tests start a control plane; `cd bench && go run ./harness -only testkit` runs them (it sets " + EnvFirst + ")"

// Enabled reports whether the harness runs this package: TestMain starts
// its kit only then.
func Enabled() bool { return os.Getenv(EnvFirst) != "" }

var first sync.Once

// Case is the body of every test: in a namespace of the test's own, create
// a ConfigMap and read it back. cs is nil when the kit was not started
// (EnvFirst unset), and the test skips.
func Case(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	if cs == nil {
		t.Skip(SkipReason)
	}
	first.Do(func() { mark(t) })
	ctx := t.Context()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "testkit-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create a namespace: %v", err)
	}
	t.Cleanup(func() {
		// t.Context() is done by now
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	want := map[string]string{"test": t.Name()}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kit"}, Data: want}
	if _, err := cs.CoreV1().ConfigMaps(ns.Name).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a ConfigMap in %s: %v", ns.Name, err)
	}
	got, err := cs.CoreV1().ConfigMaps(ns.Name).Get(ctx, "kit", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("read the ConfigMap back from %s: %v", ns.Name, err)
	}
	if got.Data["test"] != want["test"] {
		t.Fatalf("read back data %v, wrote %v", got.Data, want)
	}
}

// mark writes the time now to the file EnvFirst names: the harness takes
// it as the moment the first test's body ran.
func mark(t *testing.T) {
	now := time.Now().UnixNano()
	if err := os.WriteFile(os.Getenv(EnvFirst), []byte(strconv.FormatInt(now, 10)), 0o644); err != nil {
		t.Fatalf("record the first test's start for the harness (%s): %v", EnvFirst, err)
	}
}
