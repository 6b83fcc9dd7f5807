package ctrlbridge_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/builtin"
	"github.com/opgen-sdk/opgen/pkg/runtime/ctrlbridge"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// The process of these tests: a controller-runtime manager that hosts an
// opgen operator, as the cmd/main.go of an adopted kubebuilder project
// builds it. Two controllers:
//
//   - gadget: for each Gadget, a ConfigMap <name>-gadget (owned) with its
//     message, and the status Ready with the count of its size. It starts
//     as a controller-runtime reconciler and moves to opgen.
//   - echo: for each ConfigMap labelled echoLabel, a Secret <name>-echo
//     (owned) with its data. An opgen controller from the start.
const (
	operatorName = "bridge-test"
	leaseName    = "bridge-test.example.com"
	echoLabel    = "bridge-test.example.com/echo"
)

var (
	configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")
	secretGVK    = corev1.SchemeGroupVersion.WithKind("Secret")
)

// process is one run of the binary.
type process struct {
	mgr      manager.Manager
	op       *runtime.Operator
	metrics  string // http://host:port/metrics
	health   string // http://host:port
	notReady *flag
	cancel   context.CancelFunc
	done     chan error
}

// options of a process: whether gadget has moved to opgen yet.
type options struct{ moved bool }

// start starts a process on cfg, watching ns, and waits until its manager
// serves its probes.
func start(t *testing.T, cfg *rest.Config, ns string, o options) *process {
	t.Helper()
	log := testr.NewWithOptions(t, testr.Options{Verbosity: 0})
	scheme := k8sruntime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	require.NoError(t, testapi.AddToScheme(scheme))
	metricsAddr, healthAddr := freeAddr(t), freeAddr(t)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Logger:                        log,
		Metrics:                       metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:        healthAddr,
		LeaderElection:                true,
		LeaderElectionID:              leaseName,
		LeaderElectionNamespace:       ns,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 ptr.To(4 * time.Second),
		RenewDeadline:                 ptr.To(3 * time.Second),
		RetryPeriod:                   ptr.To(500 * time.Millisecond),
		GracefulShutdownTimeout:       ptr.To(10 * time.Second),
		Cache:                         cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller:                    config.Controller{SkipNameValidation: ptr.To(true)},
	})
	require.NoError(t, err)
	require.NoError(t, mgr.AddReadyzCheck("ping", healthz.Ping))
	require.NoError(t, mgr.AddHealthzCheck("ping", healthz.Ping))
	op, err := ctrlbridge.New(mgr, runtime.Options{Name: operatorName, Namespaces: []string{ns}, ShutdownTimeout: 5 * time.Second})
	require.NoError(t, err)
	p := &process{mgr: mgr, op: op, metrics: "http://" + metricsAddr + "/metrics", health: "http://" + healthAddr, notReady: &flag{}}
	require.NoError(t, op.AddReadyCheck("test", func(*http.Request) error { return p.notReady.err() }))
	_, err = runtime.Register(op, builtin.ConfigMaps(op, builtin.Options{LabelSelector: echoLabel + "=true"}), echo{},
		runtime.ControllerOptions[*corev1.ConfigMap]{Name: "echo", Owns: []schema.GroupVersionKind{secretGVK}})
	require.NoError(t, err)
	if o.moved {
		kind, err := testapi.KindFor(op)
		require.NoError(t, err)
		// A reconcile every second: the steady state is checked under
		// actions that run, not in their absence.
		_, err = runtime.Register(op, kind, gadgetController{}, runtime.ControllerOptions[*testapi.Gadget]{
			Name: "gadget", Owns: []schema.GroupVersionKind{configMapGVK}, ReconcileEvery: time.Second,
		})
		require.NoError(t, err)
	} else {
		require.NoError(t, (&gadgetReconciler{Client: mgr.GetClient(), Scheme: scheme}).SetupWithManager(mgr))
	}
	ctx, cancel := context.WithCancel(logr.NewContext(context.Background(), log))
	p.cancel, p.done = cancel, make(chan error, 1)
	go func() { p.done <- mgr.Start(ctx) }()
	t.Cleanup(func() { _ = p.stop() })
	eventually(t, "the manager to serve /healthz", func() bool { return get(p.health+"/healthz") == http.StatusOK })
	return p
}

// stop cancels the manager and returns what Start returned, or an error
// when it did not return within a minute.
func (p *process) stop() error {
	if p.cancel == nil {
		return nil
	}
	p.cancel()
	p.cancel = nil
	select {
	case err := <-p.done:
		return err
	case <-time.After(time.Minute):
		return errTimeout
	}
}

type timeoutError struct{}

func (timeoutError) Error() string {
	return "the manager's Start did not return within a minute of cancel"
}

var errTimeout error = timeoutError{}

// flag is a switch a test flips to fail the operator's ready check.
type flag struct {
	mu sync.Mutex
	on bool
}

func (f *flag) set(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.on = on
}

func (f *flag) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.on {
		return errNotReady
	}
	return nil
}

type notReadyError struct{}

func (notReadyError) Error() string { return "the test says not ready" }

var errNotReady error = notReadyError{}

// freeAddr returns a free port of 127.0.0.1: the manager binds it a moment
// later (controller-runtime does not tell the port it bound for ":0").
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// get returns the status code of a GET of url, 0 when it fails.
func get(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// body returns the status code and body of a GET of url.
func body(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}
