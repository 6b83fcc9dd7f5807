package main

import (
	"context"
	"strings"
	"testing"

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
	"github.com/opgen-sdk/opgen/pkg/optest"
)

// The operator runs once for the package, in-process but as its own
// ServiceAccount with exactly the generated RBAC, against a control plane
// whose controller manager creates ReplicaSets and collects garbage, and a
// fake kubelet that makes pods ready.
var (
	kit = optest.New(optest.Options{
		Name:        "hello-operator",
		Setup:       controller.Setup,
		FakeKubelet: true,
		// The API server logs the operator's requests, for
		// TestTheRolesAllowEveryRequest (opgen rbac audit reads them too).
		Audit: true,
	})
	hello versioned.Interface
)

func TestMain(m *testing.M) {
	kit.OnStart(func() { hello = versioned.NewForConfigOrDie(kit.Config) })
	kit.Main(m)
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
	ns := kit.Namespace(t)
	cs := kit.Clientset
	createGreeting(t, ns, "world", "Hello, world")

	greeting := func(ctx context.Context) (*hellov1.Greeting, error) {
		return hello.HelloV1().Greetings(ns).Get(ctx, "world", metav1.GetOptions{})
	}
	deployment := func(ctx context.Context) (*appsv1.Deployment, error) {
		return cs.AppsV1().Deployments(ns).Get(ctx, "world", metav1.GetOptions{})
	}
	service := func(ctx context.Context) (*corev1.Service, error) {
		return cs.CoreV1().Services(ns).Get(ctx, "world", metav1.GetOptions{})
	}
	owner, err := greeting(ctx)
	require.NoError(t, err)
	dep := optest.WaitForOwned(t, owner, deployment)
	assert.Equal(t, int32(controller.Replicas), *dep.Spec.Replicas)
	assert.Equal(t, "Hello, world", greetingEnv(dep))
	assert.Equal(t, controller.Image, dep.Spec.Template.Spec.Containers[0].Image)
	require.Len(t, dep.OwnerReferences, 1)
	assert.Equal(t, "Greeting", dep.OwnerReferences[0].Kind)
	assert.Equal(t, "hello-operator", dep.Labels["app.kubernetes.io/managed-by"])

	svc := optest.WaitForOwned(t, owner, service)
	assert.Equal(t, int32(controller.Port), svc.Spec.Ports[0].Port)
	assert.Equal(t, dep.Spec.Selector.MatchLabels, svc.Spec.Selector)

	// The fake kubelet runs the pods; readiness flows back into the status.
	optest.WaitForCondition(t, greeting, apis.Ready)
	g := optest.WaitFor(t, "2 ready replicas and status at the generation", greeting, func(g *hellov1.Greeting) bool {
		return g.Status.ReadyReplicas == controller.Replicas && g.Status.ObservedGeneration == g.Generation
	})
	assert.Equal(t, "http://world."+ns+".svc:5000", g.Status.URL)
	assert.Empty(t, g.Finalizers, "hello has no Delete, so no finalizer")
	assertEvent(t, ns, "Created", `answering "Hello, world"`)

	// Modify: the new greeting reaches the Deployment.
	g.Spec.Greeting = "Bonjour"
	_, err = hello.HelloV1().Greetings(ns).Update(ctx, g, metav1.UpdateOptions{})
	require.NoError(t, err)
	optest.WaitFor(t, "the new greeting in the Deployment", deployment, func(d *appsv1.Deployment) bool {
		return greetingEnv(d) == "Bonjour"
	})
	optest.WaitFor(t, "observedGeneration 2", greeting, func(g *hellov1.Greeting) bool {
		return g.Status.ObservedGeneration == 2
	})
	assertEvent(t, ns, "Updated", `now answers "Bonjour"`)

	// Delete: the garbage collector removes what the Greeting owned.
	require.NoError(t, hello.HelloV1().Greetings(ns).Delete(ctx, "world", metav1.DeleteOptions{}))
	optest.WaitForDeletion(t, "the Deployment", deployment)
	optest.WaitForDeletion(t, "the Service", service)
}

// TestDescendantsAreRestored: what the operator owns comes back when
// someone deletes it.
func TestDescendantsAreRestored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := kit.Namespace(t)
	cs := kit.Clientset
	createGreeting(t, ns, "sturdy", "still here")
	service := func(ctx context.Context) (*corev1.Service, error) {
		return cs.CoreV1().Services(ns).Get(ctx, "sturdy", metav1.GetOptions{})
	}
	first := optest.WaitFor(t, "the Service", service, nil)
	require.NoError(t, cs.CoreV1().Services(ns).Delete(ctx, "sturdy", metav1.DeleteOptions{}))
	optest.WaitFor(t, "the Service recreated", service, func(s *corev1.Service) bool {
		return s.UID != first.UID && s.DeletionTimestamp == nil
	})
}

// TestInvalidGreetingIsRejected: the CRD's validation reaches the server.
func TestInvalidGreetingIsRejected(t *testing.T) {
	t.Parallel()
	ns := kit.Namespace(t)
	_, err := hello.HelloV1().Greetings(ns).Create(context.Background(), &hellov1.Greeting{
		ObjectMeta: metav1.ObjectMeta{Name: "empty"},
	}, metav1.CreateOptions{})
	require.Error(t, err)
	assert.True(t, apierrors.IsInvalid(err))
	assert.Contains(t, err.Error(), "spec.greeting")
}

// TestNameThatCannotNameAServiceIsRefused: a Greeting names its Service
// after itself, and a Service's name is a DNS-1035 label, so the CRD
// (+opgen:controller:namesOwned) refuses at create a name with a dot,
// a name longer than 63 characters and one starting with a digit, which
// would otherwise stay Degraded for ever; the longest valid name works.
func TestNameThatCannotNameAServiceIsRefused(t *testing.T) {
	t.Parallel()
	ns := kit.Namespace(t)
	for _, name := range []string{"dotted.name", strings.Repeat("a", 64), "1st"} {
		_, err := hello.HelloV1().Greetings(ns).Create(context.Background(), &hellov1.Greeting{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       hellov1.GreetingSpec{Greeting: "never served"},
		}, metav1.CreateOptions{})
		require.Error(t, err, name)
		assert.True(t, apierrors.IsInvalid(err), "%s: %v", name, err)
		assert.Contains(t, err.Error(), "Greeting names its v1.Service after itself (+opgen:controller:namesOwned), so its name must be a DNS-1035 label", name)
	}
	longest := strings.Repeat("a", 63)
	createGreeting(t, ns, longest, "at the limit")
	optest.WaitFor(t, "the Service of the longest name", func(ctx context.Context) (*corev1.Service, error) {
		return kit.Clientset.CoreV1().Services(ns).Get(ctx, longest, metav1.GetOptions{})
	}, nil)
}

// TestManifestIsAcceptedByTheServer checks the full manifest, Deployment
// included, with a server-side dry run.
func TestManifestIsAcceptedByTheServer(t *testing.T) {
	t.Parallel()
	out, err := optest.DryRun(context.Background(), kit.Config, "deploy/hello-operator.yaml")
	require.NoError(t, err, out)
	assert.Contains(t, out, "deployment.apps/hello-operator (server dry run)")
}

func assertEvent(t *testing.T, ns, reason, note string) {
	t.Helper()
	optest.Eventually(t, "a "+reason+" event", func(ctx context.Context) (bool, error) {
		list, err := kit.Clientset.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.Type == corev1.EventTypeNormal && e.Reason == reason && strings.Contains(e.Note, note) {
				return true, nil
			}
		}
		return false, nil
	})
}
