package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/apis"
	hellov1 "github.com/opgen-sdk/opgen/examples/hello-operator/apis/hello/v1"
	"github.com/opgen-sdk/opgen/examples/hello-operator/internal/controller"
	"github.com/opgen-sdk/opgen/examples/hello-operator/pkg/generated/clientset/versioned"
	"github.com/opgen-sdk/opgen/internal/e2e"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

// The operator runs once for the package, in-process but as its own
// ServiceAccount with exactly the generated RBAC, against a control plane
// whose controller manager creates ReplicaSets and collects garbage, and a
// fake kubelet that makes pods ready.
var (
	env = testenv.New(testenv.Options{
		ControllerManager: true,
		CRDDirs:           []string{"config/crd"},
	})
	hello versioned.Interface
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx := context.Background()
	if err := env.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	kubeletCtx, stopKubelet := context.WithCancel(ctx)
	defer stopKubelet()
	if err := env.RunFakeKubelet(kubeletCtx, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	op, err := e2e.Install(ctx, env, "hello-operator", "config")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stop, err := op.Run(op.Options(logr.Logger{}), controller.Setup)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	hello = versioned.NewForConfigOrDie(env.Config)
	code := m.Run()
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, "operator:", err)
		return 1
	}
	return code
}

func createGreeting(t *testing.T, ns, name, text string) {
	t.Helper()
	_, err := hello.HelloV1().Greetings(ns).Create(context.Background(), &hellov1.Greeting{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       hellov1.GreetingSpec{Greeting: text},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
}

func greetingEnv(d *appsv1.Deployment) string {
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "GREETING" {
			return e.Value
		}
	}
	return ""
}

// TestGreetingLifecycle follows one Greeting from creation to deletion.
func TestGreetingLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := env.Namespace(t)
	cs := env.Clientset()
	createGreeting(t, ns, "world", "Hello, world")

	var dep *appsv1.Deployment
	e2e.Eventually(t, time.Minute, "the Deployment", func() bool {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "world", metav1.GetOptions{})
		dep = d
		return err == nil
	})
	assert.Equal(t, int32(controller.Replicas), *dep.Spec.Replicas)
	assert.Equal(t, "Hello, world", greetingEnv(dep))
	assert.Equal(t, controller.Image, dep.Spec.Template.Spec.Containers[0].Image)
	require.Len(t, dep.OwnerReferences, 1)
	assert.Equal(t, "Greeting", dep.OwnerReferences[0].Kind)
	assert.Equal(t, "hello-operator", dep.Labels["app.kubernetes.io/managed-by"])

	svc, err := cs.CoreV1().Services(ns).Get(ctx, "world", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(controller.Port), svc.Spec.Ports[0].Port)
	assert.Equal(t, dep.Spec.Selector.MatchLabels, svc.Spec.Selector)

	// The fake kubelet runs the pods; readiness flows back into the status.
	e2e.Eventually(t, time.Minute, "Ready with 2 replicas", func() bool {
		g, err := hello.HelloV1().Greetings(ns).Get(ctx, "world", metav1.GetOptions{})
		return err == nil && g.Status.ReadyReplicas == controller.Replicas && apis.IsTrue(g, apis.Ready) &&
			g.Status.ObservedGeneration == g.Generation
	})
	g, err := hello.HelloV1().Greetings(ns).Get(ctx, "world", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "http://world."+ns+".svc:5000", g.Status.URL)
	assert.Empty(t, g.Finalizers, "hello has no Delete, so no finalizer")
	assertEvent(t, ns, "Created", `answering "Hello, world"`)

	// Modify: the new greeting reaches the Deployment.
	g.Spec.Greeting = "Bonjour"
	_, err = hello.HelloV1().Greetings(ns).Update(ctx, g, metav1.UpdateOptions{})
	require.NoError(t, err)
	e2e.Eventually(t, time.Minute, "the new greeting in the Deployment", func() bool {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "world", metav1.GetOptions{})
		return err == nil && greetingEnv(d) == "Bonjour"
	})
	e2e.Eventually(t, time.Minute, "observedGeneration 2", func() bool {
		g, err := hello.HelloV1().Greetings(ns).Get(ctx, "world", metav1.GetOptions{})
		return err == nil && g.Status.ObservedGeneration == 2
	})
	assertEvent(t, ns, "Updated", `now answers "Bonjour"`)

	// Delete: the garbage collector removes what the Greeting owned.
	require.NoError(t, hello.HelloV1().Greetings(ns).Delete(ctx, "world", metav1.DeleteOptions{}))
	e2e.Eventually(t, time.Minute, "the Deployment and Service gone", func() bool {
		_, errD := cs.AppsV1().Deployments(ns).Get(ctx, "world", metav1.GetOptions{})
		_, errS := cs.CoreV1().Services(ns).Get(ctx, "world", metav1.GetOptions{})
		return apierrors.IsNotFound(errD) && apierrors.IsNotFound(errS)
	})
}

// TestDescendantsAreRestored: what the operator owns comes back when
// someone deletes it.
func TestDescendantsAreRestored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := env.Namespace(t)
	cs := env.Clientset()
	createGreeting(t, ns, "sturdy", "still here")
	e2e.Eventually(t, time.Minute, "the Service", func() bool {
		_, err := cs.CoreV1().Services(ns).Get(ctx, "sturdy", metav1.GetOptions{})
		return err == nil
	})
	require.NoError(t, cs.CoreV1().Services(ns).Delete(ctx, "sturdy", metav1.DeleteOptions{}))
	e2e.Eventually(t, time.Minute, "the Service recreated", func() bool {
		s, err := cs.CoreV1().Services(ns).Get(ctx, "sturdy", metav1.GetOptions{})
		return err == nil && s.DeletionTimestamp == nil
	})
}

// TestInvalidGreetingIsRejected: the CRD's validation reaches the server.
func TestInvalidGreetingIsRejected(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	_, err := hello.HelloV1().Greetings(ns).Create(context.Background(), &hellov1.Greeting{
		ObjectMeta: metav1.ObjectMeta{Name: "empty"},
	}, metav1.CreateOptions{})
	require.Error(t, err)
	assert.True(t, apierrors.IsInvalid(err))
	assert.Contains(t, err.Error(), "spec.greeting")
}

// TestManifestIsAcceptedByTheServer checks the full manifest, Deployment
// included, with a server-side dry run.
func TestManifestIsAcceptedByTheServer(t *testing.T) {
	t.Parallel()
	out, err := e2e.DryRun(context.Background(), env, "deploy/hello-operator.yaml")
	require.NoError(t, err, out)
	assert.Contains(t, out, "deployment.apps/hello-operator created (server dry run)")
}

func assertEvent(t *testing.T, ns, reason, note string) {
	t.Helper()
	e2e.Eventually(t, 30*time.Second, "a "+reason+" event", func() bool {
		list, err := env.Clientset().EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range list.Items {
			if e.Type == corev1.EventTypeNormal && e.Reason == reason && strings.Contains(e.Note, note) {
				return true
			}
		}
		return false
	})
}
