// Package optest is the operator author's test kit. It gives a test package
// a Kubernetes API server (the local control plane of pkg/testenv, shared
// with the machine's other test packages when it can be, or an existing
// cluster when OPTEST_USE_EXISTING_CLUSTER=true and KUBECONFIG
// name one), installs the operator's generated manifest (CRDs, RBAC,
// namespace and ServiceAccount, no Deployment), runs the operator
// in-process as its generated ServiceAccount, so RBAC the generator did not
// grant fails the test, and offers typed waits that name what they wait for.
// With Options.Audit the API server logs the operator's requests, and
// Kit.Audit lists those the roles forbid and the rules none used (package
// rbacaudit; opgen rbac audit does it for every test package).
//
//	var kit = optest.New(optest.Options{Name: "hello-operator", Setup: controller.Setup})
//
//	func TestMain(m *testing.M) { kit.Main(m) }
//
// The package is stable: an incompatible change of its API comes with a
// line in CHANGELOG.md that says how to migrate, and, where it can,
// after a release of deprecation.
package optest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/opgen-sdk/opgen/pkg/rbacaudit"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

// ExistingClusterEnv names the environment variable that, set to true,
// makes a Kit use the cluster KUBECONFIG (or ~/.kube/config) names instead
// of starting a local control plane: the end-to-end mode.
const ExistingClusterEnv = "OPTEST_USE_EXISTING_CLUSTER"

// Options configure a Kit.
type Options struct {
	// Name is the operator's name, as in its generated RBAC and in
	// `opgen manifests --name`. Empty installs and runs no operator.
	Name string
	// Namespace holds the operator's ServiceAccount and Lease.
	// Default: Name + "-system".
	Namespace string
	// ConfigDir is the project's config directory (crd/ and rbac/), relative
	// to the test package's directory. Default: "config".
	ConfigDir string
	// Setup registers the operator's controllers; usually the generated
	// controller.Setup. Nil installs the manifest but runs no operator.
	Setup func(*runtime.Operator) error
	// Logger receives the operator's logs. Default: the runtime's default
	// (text on stderr).
	Logger logr.Logger
	// Runtime adjusts the options the operator runs with, after the kit's
	// own (its name, leader election in its namespace with short timings,
	// no servers): a fake clock (runtime.Options.Clock) to step time in
	// the test, the workers, a logger.
	Runtime func(*runtime.Options)
	// Profile names the local control plane's shape: ProfileAPIServer
	// (the default) or ProfileControllers.
	Profile Profile
	// FakeKubelet marks the Pods of the local control plane running and
	// ready, so workloads become available (implies ProfileControllers).
	FakeKubelet bool
	// FakeClock runs the operator on a fake clock
	// (runtime.Options.Clock), which a test takes with Kit.Clock and
	// steps instead of waiting: a handler's RequeueAfter(time.Hour) comes
	// due at once. Handlers read it from op.Options().Clock. Leader
	// election is off then: it would run on that clock too, and a Lease
	// renewed an hour ahead would hold off the operator of the next test,
	// whose clock starts from now again.
	FakeClock bool
	// Audit logs every request of the operator's ServiceAccount (the API
	// server's audit log, testenv.Options.Audit) so that Kit.Audit can
	// compare them with the roles the manifest binds to it. It gives the
	// package a control plane of its own; an existing cluster has no such
	// log. rbacaudit.EnvAudit sets it for every kit of a run.
	Audit bool
	// Env configures the local control plane; ignored on an existing cluster.
	Env testenv.Options
}

// Profile is a shape of the local control plane.
type Profile string

const (
	// ProfileAPIServer is etcd and kube-apiserver: what runs objects'
	// API. No garbage collector (owned objects stay after their owner is
	// deleted), no Job or Deployment controller. The shared control plane
	// runs the namespace controller beside them, so the namespaces tests
	// delete go away; a private one (Env.Private) runs none.
	ProfileAPIServer Profile = ""
	// ProfileControllers adds kube-controller-manager with
	// testenv.DefaultControllers: the garbage collector, the namespace,
	// job, deployment, replicaset, statefulset and serviceaccount
	// controllers. Jobs get Pods (which stay Pending without FakeKubelet),
	// owned objects go with their owner. The control plane is the
	// package's own: the controllers would act on the other packages'
	// objects.
	ProfileControllers Profile = "controllers"
)

// Kit is the test set-up of one test package.
type Kit struct {
	// Config authenticates as an admin.
	Config *rest.Config
	// Clientset uses Config.
	Clientset kubernetes.Interface
	// Env is the local control plane; nil on an existing cluster.
	Env *testenv.Environment
	// Operator is the installed operator; nil without Options.Name.
	Operator *Operator

	opts        Options
	existing    bool
	stopOp      func() error
	stopKubelet func()
	onStart     []func()
	// writes are the writes made through Config, until WaitSeen.
	writes writeLog
	// clock is the operator's fake clock (Options.FakeClock), held by one
	// test at a time (Clock).
	clock       *clocktesting.FakeClock
	clockTurn   chan struct{}
	clockMu     sync.Mutex
	clockHolder testing.TB
}

// OnStart registers fn to run once Start has succeeded, before the tests:
// the place to build clients from Config.
func (k *Kit) OnStart(fn func()) { k.onStart = append(k.onStart, fn) }

// New returns a Kit, not started yet; start it with Main or Start.
func New(opts Options) *Kit {
	if opts.ConfigDir == "" {
		opts.ConfigDir = "config"
	}
	if opts.Namespace == "" && opts.Name != "" {
		opts.Namespace = opts.Name + "-system"
	}
	if opts.FakeKubelet || opts.Profile == ProfileControllers {
		opts.Env.ControllerManager = true
	}
	if os.Getenv(rbacaudit.EnvAudit) != "" && opts.Name != "" {
		opts.Audit = true
	}
	opts.Env.Audit = opts.Env.Audit || opts.Audit
	k := &Kit{opts: opts, clockTurn: make(chan struct{}, 1)}
	if opts.FakeClock {
		k.clock = clocktesting.NewFakeClock(time.Now())
	}
	return k
}

// UseExistingCluster reports whether ExistingClusterEnv asks for the
// KUBECONFIG cluster.
func UseExistingCluster() bool {
	v, _ := strconv.ParseBool(os.Getenv(ExistingClusterEnv))
	return v
}

// Main is the whole TestMain of a package: it starts k, runs the tests,
// stops k and exits with the tests' status; a failure to start fails the
// package with the reason.
func (k *Kit) Main(m *testing.M) {
	os.Exit(k.run(m))
}

func (k *Kit) run(m *testing.M) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := k.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "optest:", err)
		k.Stop()
		return 1
	}
	for _, fn := range k.onStart {
		fn()
	}
	code := m.Run()
	if err := k.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "optest: the operator:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Start connects to the cluster (starting the local control plane unless
// an existing cluster is asked for), installs the manifest and starts the
// operator, waiting for its caches to sync.
func (k *Kit) Start(ctx context.Context) error {
	k.existing = UseExistingCluster()
	if k.existing {
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
		if err != nil {
			return fmt.Errorf("%s=true but KUBECONFIG names no usable cluster: %w", ExistingClusterEnv, err)
		}
		k.Config = cfg
	} else {
		k.Env = testenv.New(k.envOptions())
		if err := k.Env.StartShared(ctx); err != nil {
			return err
		}
		k.Config = rest.CopyConfig(k.Env.Config)
		if k.opts.FakeKubelet {
			kctx, cancel := context.WithCancel(context.Background())
			k.stopKubelet = cancel
			if err := k.Env.RunFakeKubelet(kctx, nil); err != nil {
				return err
			}
		}
	}
	k.Config.Wrap(k.writes.wrap) // for WaitSeen
	cs, err := kubernetes.NewForConfig(k.Config)
	if err != nil {
		return err
	}
	k.Clientset = cs
	if k.opts.Name == "" {
		return nil
	}
	op, err := Install(ctx, k.Config, InstallOptions{Name: k.opts.Name, Namespace: k.opts.Namespace, ConfigDir: k.opts.ConfigDir})
	if err != nil {
		return err
	}
	k.Operator = op
	if k.opts.Setup == nil {
		return nil
	}
	return k.StartOperator(ctx)
}

// envOptions are Options.Env with the operator's CRDs and name made
// exclusive: on the shared control plane, two packages that run operators
// for the same kinds, or under the same name (its ClusterRoles, namespace
// and Lease), would act on each other's objects.
func (k *Kit) envOptions() testenv.Options {
	o := k.opts.Env
	if k.opts.Name == "" {
		return o
	}
	o.Exclusive = append(slices.Clone(o.Exclusive), "operator "+k.opts.Name)
	crds, _ := testenv.ReadCRDs(filepath.Join(k.opts.ConfigDir, "crd")) // Install reports a bad directory
	for _, crd := range crds {
		o.Exclusive = append(o.Exclusive, crd.Name)
	}
	return o
}

// StartOperator starts the installed operator again after StopOperator,
// and waits for its caches to sync.
func (k *Kit) StartOperator(ctx context.Context) error {
	if k.Operator == nil || k.opts.Setup == nil {
		return fmt.Errorf("optest: no operator to start: Options.Name and Options.Setup are needed")
	}
	if k.stopOp != nil {
		return fmt.Errorf("optest: the %s operator is running already", k.Operator.Name)
	}
	opts := k.Operator.Options(k.opts.Logger)
	if k.clock != nil {
		opts.Clock, opts.LeaderElection.Disabled = k.clock, true
	}
	if k.opts.Runtime != nil {
		k.opts.Runtime(&opts)
	}
	stop, err := k.Operator.Start(ctx, opts, k.opts.Setup)
	if err != nil {
		return err
	}
	k.stopOp = stop
	return nil
}

// StopOperator stops the operator, as a crash or an upgrade would, and
// returns its Run's error; StartOperator starts it again.
func (k *Kit) StopOperator() error {
	if k.stopOp == nil {
		return nil
	}
	err := k.stopOp()
	k.stopOp = nil
	return err
}

// Stop stops the operator and the local control plane and returns the
// operator's error. It leaves an existing cluster as it is, apart from the
// namespaces the tests made, which their cleanups delete.
func (k *Kit) Stop() error {
	err := k.StopOperator()
	if rerr := k.recordAudit(); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if k.stopKubelet != nil {
		k.stopKubelet()
	}
	if k.Env != nil {
		k.Env.Stop()
	}
	return err
}

// Namespace creates a namespace with a unique name for t and deletes it when
// t ends, so tests sharing the cluster stay apart. It has a default
// ServiceAccount, which no controller manager makes in a local control
// plane, so Pods can be created in it.
func (k *Kit) Namespace(t testing.TB) string {
	t.Helper()
	return Namespace(t, k.Clientset)
}

// Namespace creates a namespace with a unique name and a default
// ServiceAccount through cs, and deletes it when t ends.
func Namespace(t testing.TB, cs kubernetes.Interface) string {
	t.Helper()
	ctx := context.Background()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "test-", Labels: map[string]string{"opgen.dev/test": "true"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("optest: create a namespace: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	_, err = cs.CoreV1().ServiceAccounts(ns.Name).Create(ctx,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !isAlreadyExists(err) {
		t.Fatalf("optest: create the default ServiceAccount in %s: %v", ns.Name, err)
	}
	return ns.Name
}

// WaitTimeout bounds every wait of the package unless a wait says
// otherwise (Within).
var WaitTimeout = time.Minute

// running is the operator the kit runs now, or nil.
func (k *Kit) running() *runtime.Operator {
	if k.Operator == nil {
		return nil
	}
	return k.Operator.running.Load()
}
