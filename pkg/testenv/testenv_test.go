package testenv_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/opgen-sdk/opgen/pkg/testenv"
)

var env = testenv.New(testenv.Options{
	ControllerManager: true,
	CRDDirs:           []string{"testdata/crd"},
})

// childMode is set when this test binary runs as the child of
// TestNoProcessOutlivesTheTests.
const childMode = "OPGEN_TESTENV_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childMode) != "" {
		os.Exit(m.Run()) // the child starts its own environment
	}
	env.Main(m)
}

var widgets = schema.GroupVersionResource{Group: "testenv.opgen.dev", Version: "v1", Resource: "widgets"}

func TestCustomResourceIsCreatedAndWatched(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := env.Namespace(t)
	client := dynamic.NewForConfigOrDie(env.Config).Resource(widgets).Namespace(ns)

	w, err := client.Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()

	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "testenv.opgen.dev/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": "w1"},
		"spec":       map[string]any{"size": int64(3)},
	}}
	_, err = client.Create(ctx, obj, metav1.CreateOptions{})
	require.NoError(t, err)

	select {
	case ev := <-w.ResultChan():
		require.Equal(t, watch.Added, ev.Type)
		got := ev.Object.(*unstructured.Unstructured)
		assert.Equal(t, "w1", got.GetName())
		size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size")
		assert.Equal(t, int64(3), size)
	case <-time.After(30 * time.Second):
		t.Fatal("no watch event for the created Widget")
	}

	// The CRD's schema is enforced by the server.
	bad := obj.DeepCopy()
	bad.SetName("w2")
	require.NoError(t, unstructured.SetNestedField(bad.Object, "big", "spec", "size"))
	_, err = client.Create(ctx, bad, metav1.CreateOptions{})
	require.Error(t, err)
	assert.True(t, apierrors.IsInvalid(err), "want Invalid, got %v", err)
}

func TestServiceAccountIsAuthorizedByRBAC(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := env.Namespace(t)
	admin := env.Clientset()

	cfg, err := env.ServiceAccountConfig(ctx, ns, "reader")
	require.NoError(t, err)
	sa := kubernetes.NewForConfigOrDie(cfg)

	_, err = sa.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	require.Error(t, err)
	assert.True(t, apierrors.IsForbidden(err), "want 403 without RBAC, got %v", err)

	_, err = admin.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: ns}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	// RBAC changes reach the authorizer through its informers; poll.
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := sa.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
	require.NoError(t, err, "the bound Role never let the service account list configmaps")

	// The role grants list, nothing else.
	_, err = sa.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	assert.True(t, apierrors.IsForbidden(err), "want 403 for create, got %v", err)

	// Impersonation is authorized by the same rules.
	imp := kubernetes.NewForConfigOrDie(env.ImpersonateServiceAccount(ns, "reader"))
	_, err = imp.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	assert.NoError(t, err)
	_, err = imp.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err), "want 403 for secrets, got %v", err)
}

func TestDeploymentGetsReplicaSetFromControllerManager(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := env.Namespace(t)
	cs := env.Clientset()
	labels := map[string]string{"app": "web"}
	_, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	var rs *appsv1.ReplicaSet
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) == 0 {
			return false, err
		}
		rs = &list.Items[0]
		return true, nil
	})
	require.NoError(t, err, "no ReplicaSet for the Deployment")
	require.Len(t, rs.OwnerReferences, 1)
	assert.Equal(t, "web", rs.OwnerReferences[0].Name)

	// Garbage collection removes the ReplicaSet with its Deployment.
	require.NoError(t, cs.AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{
		PropagationPolicy: ptr.To(metav1.DeletePropagationBackground),
	}))
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cs.AppsV1().ReplicaSets(ns).Get(ctx, rs.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	require.NoError(t, err, "the garbage collector did not delete the ReplicaSet")
}

func TestKubeconfigServesTheReleasedVersion(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(env.Binaries.Kubectl, "--kubeconfig", env.Kubeconfig, "version", "-o", "json").CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), `"gitVersion": "v1.37.`)
	assert.NotContains(t, string(out), "v0.0.0")

	out, err = exec.Command(env.Binaries.Kubectl, "--kubeconfig", env.Kubeconfig, "get", "ns", "default", "-o", "name").CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, "namespace/default\n", string(out))
}

func TestBadInputGetsAnActionableError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("port in use", func(t *testing.T) {
		t.Parallel()
		port, err := strconv.Atoi(strings.TrimPrefix(env.Config.Host, "https://127.0.0.1:"))
		require.NoError(t, err)
		e := testenv.New(testenv.Options{APIServerPort: port})
		err = e.Start(ctx)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "is in use")
		assert.Contains(t, err.Error(), "Options.APIServerPort")
	})

	t.Run("missing binary", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		e := testenv.New(testenv.Options{BinDir: dir})
		err := e.Start(ctx)
		require.Error(t, err)
		assert.Contains(t, err.Error(), filepath.Join(dir, "kube-apiserver"))
		assert.Contains(t, err.Error(), "make controlplane")
	})

	t.Run("apiserver not ready in time", func(t *testing.T) {
		t.Parallel()
		// An etcd address nothing listens on keeps the apiserver from ever
		// becoming ready, whatever the machine's speed.
		e := testenv.New(testenv.Options{
			StartTimeout:   8 * time.Second,
			APIServerFlags: []string{"--etcd-servers=http://127.0.0.1:1"},
		})
		err := e.Start(ctx)
		require.Error(t, err)
		msg := err.Error()
		assert.Contains(t, msg, "kube-apiserver was not ready in time")
		assert.Contains(t, msg, "Options.StartTimeout")
		assert.Contains(t, msg, "last lines of")
		assert.Contains(t, msg, "127.0.0.1:1", "the log tail should show the failing etcd connection")
	})
}

func TestUnwritableCacheDirIsReported(t *testing.T) {
	// Not parallel: it sets an environment variable.
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	t.Setenv("OPGEN_CONTROLPLANE_DIR", filepath.Join(file, "bin"))
	err := testenv.New(testenv.Options{}).Start(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot create the control-plane directory")
	assert.Contains(t, err.Error(), "OPGEN_CONTROLPLANE_DIR")
}

// TestNoProcessOutlivesTheTests runs this test binary again as a child that
// starts its own environment and then fails or panics, and checks that etcd
// and kube-apiserver died with it.
func TestNoProcessOutlivesTheTests(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"fail", "panic"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pids")
			cmd := exec.Command(os.Args[0], "-test.run=^TestChild$", "-test.v")
			cmd.Env = append(os.Environ(), childMode+"="+mode, "OPGEN_TESTENV_PIDS="+pidFile)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "the child was meant to fail:\n%s", out)
			if mode == "panic" {
				require.Contains(t, string(out), "panic: child panics on purpose")
			}
			data, err := os.ReadFile(pidFile)
			require.NoError(t, err, "the child did not record its pids:\n%s", out)
			pids := strings.Fields(string(data))
			require.Len(t, pids, 2)
			for _, p := range pids {
				pid, err := strconv.Atoi(p)
				require.NoError(t, err)
				// The kernel delivers the parent-death signal asynchronously;
				// wait for the exit rather than assume it is instant.
				err = wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 20*time.Second, true,
					func(context.Context) (bool, error) { return !alive(pid), nil })
				assert.NoError(t, err, "process %d outlived the %s test binary", pid, mode)
			}
		})
	}
}

// TestChild is the child half of TestNoProcessOutlivesTheTests.
func TestChild(t *testing.T) {
	mode := os.Getenv(childMode)
	if mode == "" {
		t.Skip("runs only as the child process of TestNoProcessOutlivesTheTests")
	}
	e := testenv.New(testenv.Options{})
	require.NoError(t, e.Start(context.Background()))
	if mode == "fail" {
		t.Cleanup(e.Stop) // what a test would do; the assertion checks it works
	}
	require.NoError(t, os.WriteFile(os.Getenv("OPGEN_TESTENV_PIDS"), []byte(strings.Trim(fmt.Sprint(e.PIDs()), "[]")), 0o600))
	if mode == "panic" {
		panic("child panics on purpose")
	}
	t.Fatal("child fails on purpose")
}

// alive reports whether pid runs; a zombie waiting for its reaper counts as
// dead.
func alive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

func TestFakeKubeletMakesDeploymentsReady(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := env.Namespace(t)
	cs := env.Clientset()
	var kubeletErr atomic.Pointer[error] // errors of several types: an atomic.Value would panic
	require.NoError(t, env.RunFakeKubelet(ctx, func(err error) { kubeletErr.Store(&err) }))

	labels := map[string]string{"app": "ready"}
	_, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "ready"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "ready", metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas == 2, nil
	})
	require.NoError(t, err, "the Deployment never had 2 ready replicas")
	if err := kubeletErr.Load(); err != nil {
		t.Errorf("the fake kubelet failed: %v", *err)
	}

	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, p := range pods.Items {
		assert.Equal(t, testenv.FakeNodeName, p.Spec.NodeName)
		assert.Equal(t, corev1.PodRunning, p.Status.Phase)
	}
}
