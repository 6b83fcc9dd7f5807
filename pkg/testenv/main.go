package testenv

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Main is the whole TestMain of a package that talks to Kubernetes: it
// starts e with StartShared (the control plane shared by test packages,
// unless Options ask for a private one), runs the package's tests, stops e and exits with the tests'
// status. A start-up failure fails the package with the reason.
//
//	var env = testenv.New(testenv.Options{CRDDirs: []string{"../config/crd"}})
//
//	func TestMain(m *testing.M) { env.Main(m) }
func (e *Environment) Main(m *testing.M) {
	os.Exit(e.run(m))
}

func (e *Environment) run(m *testing.M) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := e.StartShared(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer e.Stop()
	// An interrupt (Ctrl-C on `go test`) must still stop the servers.
	go func() {
		<-ctx.Done()
		if ctx.Err() != nil && e.Config != nil {
			e.Stop()
		}
	}()
	return m.Run()
}

// Namespace creates a namespace with a unique name for t and deletes it when
// t ends, so tests that share one environment stay apart.
func (e *Environment) Namespace(t testing.TB) string {
	t.Helper()
	ns, err := e.clientset.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("testenv: create namespace: %v", err)
	}
	t.Cleanup(func() {
		_ = e.clientset.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}
