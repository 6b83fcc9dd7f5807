package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	todov1 "github.com/opgen-sdk/opgen/examples/todo-operator/apis/todo/v1"
	"github.com/opgen-sdk/opgen/examples/todo-operator/pkg/generated/clientset/versioned"
	"github.com/opgen-sdk/opgen/pkg/webhook"
)

// churn is a create/delete churn against a throttled todo-operator.
type churn struct {
	rate     int           // Todos created per second
	lifetime time.Duration // each Todo is deleted this long after its create
	duration time.Duration // how long Todos are created
	qps      int           // the operator's --kube-api-qps and --kube-api-burst
	prefix   string        // of the Todos' names; default "c"
}

// churnResult is what a churn left behind.
type churnResult struct {
	created    int
	unarchived []string // deleted Todos no read of the archive held: their Delete never ran
	drain      time.Duration
}

// unthrottled is the test's own client config: its creates and deletes
// must keep to the churn's pace, not client-go's default 5 per second.
func unthrottled() *rest.Config {
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS = -1
	return cfg
}

// run creates c.rate Todos a second for c.duration in ns, deletes each
// c.lifetime after its create, waits until every Todo is gone and reads
// the archive.
func (c churn) run(t *testing.T, ns string) churnResult {
	t.Helper()
	cfg := unthrottled()
	todos := versioned.NewForConfigOrDie(cfg).TodoV1().Todos(ns)
	ctx := context.Background()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		errs    []error
		created []string
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	// The archive keeps its newest entries within a budget, so over a
	// long churn the oldest leave it: what was archived is every name any
	// read of the archive held, read every 10 s (at most 50 Todos a second
	// come in between; the archive holds thousands).
	archived := map[string]bool{}
	readArchive := func() {
		cm, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns).Get(ctx, todoArchive, metav1.GetOptions{})
		if err != nil {
			return
		}
		mu.Lock()
		for n := range cm.Data {
			archived[n] = true
		}
		mu.Unlock()
	}
	stopReading := make(chan struct{})
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		every := time.NewTicker(10 * time.Second)
		defer every.Stop()
		for {
			select {
			case <-stopReading:
				return
			case <-every.C:
				readArchive()
			}
		}
	}()
	defer func() {
		select {
		case <-stopReading:
		default:
			close(stopReading)
		}
		<-readerDone
	}()
	tick := time.NewTicker(time.Second / time.Duration(c.rate))
	defer tick.Stop()
	t.Logf("churn: creating %d Todos a second for %s, each deleted %s after its create", c.rate, c.duration, c.lifetime)
	for end := time.Now().Add(c.duration); time.Now().Before(end); <-tick.C {
		prefix := c.prefix
		if prefix == "" {
			prefix = "c"
		}
		name := fmt.Sprintf("%s%05d", prefix, len(created))
		_, err := todos.Create(ctx, &todov1.Todo{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: todov1.TodoSpec{Title: "churn " + name}}, metav1.CreateOptions{})
		require.NoError(t, err)
		created = append(created, name)
		wg.Add(1)
		time.AfterFunc(c.lifetime, func() {
			defer wg.Done()
			if err := todos.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				fail(fmt.Errorf("delete %s: %w", name, err))
			}
		})
	}
	wg.Wait()
	require.Empty(t, errs)
	start := time.Now()
	defer func() {
		if !t.Failed() {
			return
		}
		if list, err := todos.List(ctx, metav1.ListOptions{}); err == nil {
			for _, td := range list.Items {
				t.Logf("left: %s finalizers=%v deletionTimestamp=%v generation=%d observed=%d", td.Name, td.Finalizers, td.DeletionTimestamp, td.Generation, td.Status.ObservedGeneration)
			}
		}
	}()
	eventuallyWithin(t, "the operator to finish every delete (none stuck on its finalizer)", 5*time.Minute, func() bool {
		list, err := todos.List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 0
	})
	res := churnResult{created: len(created), drain: time.Since(start)}
	close(stopReading)
	<-readerDone
	_, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns).Get(ctx, todoArchive, metav1.GetOptions{})
	require.NoError(t, err, "no archive: no Delete ran")
	readArchive()
	for _, n := range created {
		if !archived[n] {
			res.unarchived = append(res.unarchived, n)
		}
	}
	slices.Sort(res.unarchived)
	return res
}

// TestChurnArchivesEveryDelete: Todos are created faster than a throttled
// todo-operator can handle them (three Todo writes per Todo: finalizer,
// status, finalizer removal), and each is deleted shortly after its
// create. The finalizer goes on ahead of the queued work, so every Todo
// is protected before its delete and archived: the unarchived share must
// be 0. The lifetime is several times the bound on how long a new Todo
// waits for its finalizer (a worker finishing its current action, then
// one write: about 4 writes at the throttled rate).
func TestChurnArchivesEveryDelete(t *testing.T) {
	c := churn{rate: 5, lifetime: 2 * time.Second, duration: 15 * time.Second, qps: 10}
	if full() {
		c.duration = 90 * time.Second
	}
	ns := env.Namespace(t)
	bin := buildTodoOperator(t)
	logPath := filepath.Join(t.TempDir(), "operator.log")
	qps := fmt.Sprint(c.qps)
	startOperator(t, bin, ns, logPath, "--kube-api-qps", qps, "--kube-api-burst", qps)
	defer func() {
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("operator log:\n%s", b)
			}
		}
	}()
	res := c.run(t, ns)
	log, err := os.ReadFile(logPath)
	require.NoError(t, err)
	// A write of the archive that lost to another (the ConfigMap changed
	// since it was read) and ran out of retries fails the action.
	conflicts := strings.Count(string(log), "the object has been modified")
	t.Logf("figures: %d Todos created at %d/s (each deleted after %s) against --kube-api-qps=%d: %d unarchived (%.1f%%), backlog drained in %s, %d actions failed on an archive conflict",
		res.created, c.rate, c.lifetime, c.qps, len(res.unarchived), 100*float64(len(res.unarchived))/float64(res.created), res.drain.Round(100*time.Millisecond), conflicts)
	require.Empty(t, res.unarchived, "Todos deleted before their finalizer landed: their Delete never ran")
	// The operator's workers take turns on a namespace's archive: nothing
	// else writes it here, so no write may lose.
	require.Zero(t, conflicts, "actions failed on an archive conflict")
}

// eventuallyWithin polls cond every 100ms for up to d, saying first what
// it waits for, and fails t when it never held.
func eventuallyWithin(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	t.Logf("waiting up to %s for %s", d, what)
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, d, true,
		func(context.Context) (bool, error) { return cond(), nil })
	require.NoError(t, err, "waited %s in vain for %s", d, what)
}

// TestChurnWithAdmissionFinalizer: the todo-operator serves its webhooks
// (local mode: it registers itself with the API server), so its defaulting
// webhook puts the finalizer on each Todo in the create itself. Todos
// deleted right after their create, far faster than the throttled
// operator acts, are all archived: the finalizer is there before any
// delete can be.
func TestChurnWithAdmissionFinalizer(t *testing.T) {
	c := churn{rate: 10, lifetime: 0, duration: 10 * time.Second, qps: 10}
	if full() {
		c.duration = 30 * time.Second
	}
	ns := env.Namespace(t)
	bin := buildTodoOperator(t)
	logPath := filepath.Join(t.TempDir(), "operator.log")
	// Registered first, so it runs after the operator was killed: the
	// registration it leaves fails closed.
	t.Cleanup(func() { removeWebhookRegistration(t, "todo-operator", "todos.todo.example.com") })
	qps := fmt.Sprint(c.qps)
	startOperator(t, bin, ns, logPath, "--kube-api-qps", qps, "--kube-api-burst", qps,
		"--webhook-bind-address", "127.0.0.1:0", "--webhook-mode", "local")
	defer func() {
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("operator log:\n%s", b)
			}
		}
	}()
	todos := versioned.NewForConfigOrDie(unthrottled()).TodoV1().Todos(ns)
	eventuallyWithin(t, "the operator to register its webhooks (a probe Todo created with the finalizer)", 2*time.Minute, func() bool {
		ctx := context.Background()
		td, err := todos.Create(ctx, &todov1.Todo{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-"}, Spec: todov1.TodoSpec{Title: "probe " + time.Now().String()}}, metav1.CreateOptions{})
		if err != nil {
			return false
		}
		_ = todos.Delete(ctx, td.Name, metav1.DeleteOptions{})
		return len(td.Finalizers) > 0
	})
	res := c.run(t, ns)
	t.Logf("figures: %d Todos created in %s (%.1f/s; each create waits on the webhooks, which read through the operator's client), each deleted at once, against --kube-api-qps=%d, finalizer added at admission: %d unarchived (%.1f%%), backlog drained in %s",
		res.created, c.duration, float64(res.created)/c.duration.Seconds(), c.qps, len(res.unarchived), 100*float64(len(res.unarchived))/float64(res.created), res.drain.Round(100*time.Millisecond))
	require.Empty(t, res.unarchived, "Todos whose Delete never ran")
}

// removeWebhookRegistration deletes what an operator named name
// registered in local mode (its webhook configurations, the conversion
// webhook of crd), which would fail closed once it stopped.
func removeWebhookRegistration(t *testing.T, name, crd string) {
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(env.Config)
	for _, err := range []error{
		cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, webhook.ValidatingConfigurationName(name), metav1.DeleteOptions{}),
		cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, webhook.MutatingConfigurationName(name), metav1.DeleteOptions{}),
	} {
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("remove the webhook registration of %s: %v", name, err)
		}
	}
	crds := dynamic.NewForConfigOrDie(env.Config).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	patch := []byte(`{"spec":{"conversion":{"strategy":"None","webhook":null}}}`)
	if _, err := crds.Patch(ctx, crd, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Errorf("reset the conversion of %s: %v", crd, err)
	}
}
