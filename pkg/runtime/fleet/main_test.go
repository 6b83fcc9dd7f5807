package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

const crds = "../../../test/testkit/testapi/crd"

// Three control planes: the home cluster (the shared one) and two member
// clusters of this package's own, which the tests stop and restart.
var (
	home    = testenv.New(testenv.Options{CRDDirs: []string{crds}})
	members = map[string]*testenv.Environment{
		"east": testenv.New(testenv.Options{CRDDirs: []string{crds}, Private: true}),
		"west": testenv.New(testenv.Options{CRDDirs: []string{crds}, Private: true}),
	}
)

func TestMain(m *testing.M) {
	if os.Getenv(replicaEnv) != "" {
		os.Exit(runReplica()) // a replica of TestMeasureKill
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	start := func(name string, start func(context.Context) error) {
		wg.Go(func() {
			if err := start(ctx); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("start the %s control plane: %w", name, err))
				mu.Unlock()
			}
		})
	}
	start("home", home.StartShared)
	for name, e := range members {
		start(name, e.Start)
	}
	wg.Wait()
	defer home.Stop()
	for _, e := range members {
		defer e.Stop()
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// kubeconfig returns the admin kubeconfig of e, as a Secret holds it.
func kubeconfig(t *testing.T, e *testenv.Environment) []byte {
	t.Helper()
	data, err := os.ReadFile(e.Kubeconfig)
	if err != nil {
		t.Fatalf("read the kubeconfig: %v", err)
	}
	return data
}

// memberNamespace creates namespace ns in every member cluster, so that an
// operator that watches ns works in each; they go when the test ends.
func memberNamespace(t *testing.T, ns string) {
	t.Helper()
	for _, e := range members {
		_, err := e.Clientset().CoreV1().Namespaces().Create(context.Background(), namespace(ns), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create namespace %s: %v", ns, err)
		}
		t.Cleanup(func() {
			_ = e.Clientset().CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		})
	}
}

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// journal records which cluster handled which Gadget, by identity.
type journal struct {
	mu      sync.Mutex
	handled map[string][]string // "cluster/name" -> the identities that handled it
}

func (j *journal) add(cluster, name, identity string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.handled == nil {
		j.handled = map[string][]string{}
	}
	j.handled[cluster+"/"+name] = append(j.handled[cluster+"/"+name], identity)
}

func (j *journal) keys() map[string][]string {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make(map[string][]string, len(j.handled))
	for k, v := range j.handled {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// setup returns the setup of a fleet whose Gadget handler counts each
// Gadget in its status and records it in j.
func setup(j *journal, identity string) func(*runtime.Operator) error {
	return func(op *runtime.Operator) error {
		kind, err := testapi.KindFor(op)
		if err != nil {
			return err
		}
		h := plug.HandlerFuncs[*testapi.Gadget]{
			OnReconcile: func(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
				j.add(a.Cluster, a.Object.Name, identity)
				a.Object.Status.Count = 1
				a.Object.Status.Phase = "handled in " + a.Cluster
				return nil
			},
		}
		return testkit.Register(op, kind, plug.Handler[*testapi.Gadget](h), runtime.ControllerOptions[*testapi.Gadget]{})
	}
}
