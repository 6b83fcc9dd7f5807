package webhook_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/webhook"
)

var (
	gizmosV1       = gizmoV1.WithResource("gizmos")
	gizmosV1alpha1 = gizmoV1alpha1.WithResource("gizmos")
	crdsGVR        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// runningOperator runs an operator named name with the Gizmo webhooks in
// local mode until the returned stop is called, and waits until /readyz
// says it is ready: the certificate is loaded and the configurations are
// registered.
func runningOperator(t *testing.T, name string) (op *runtime.Operator, stop func()) {
	t.Helper()
	op, err := runtime.New(env.Config, runtime.Options{
		Name:           name,
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true},
		MetricsAddr:    "0",
		Logger:         logr.FromSlogHandler(slog.DiscardHandler),
		Webhook:        runtime.WebhookOptions{Mode: runtime.WebhookModeLocal},
	})
	require.NoError(t, err)
	require.NoError(t, webhook.Validate(op, gizmoKind, gizmoWebhook{}))
	require.NoError(t, webhook.Default(op, gizmoKind, gizmoWebhook{}))
	require.NoError(t, webhook.Convert(op, gizmoScheme(), gizmoHub, "gizmos"))
	require.NoError(t, webhook.UseCertificates(op, newStaticSource(t)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			require.NoError(t, <-done)
		}
	}
	t.Cleanup(stop)
	waitReady(t, op, done)
	return op, stop
}

// waitReady polls the operator's /readyz until it answers 200.
func waitReady(t *testing.T, op *runtime.Operator, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("the operator stopped before it was ready: %v", err)
		default:
		}
		if addr := op.HealthAddr(); addr != "" {
			resp, err := http.Get("http://" + addr + "/readyz")
			if err == nil {
				body := make([]byte, 512)
				n, _ := resp.Body.Read(body)
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return
				}
				last = string(body[:n])
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("waiting 60s for the operator's /readyz (webhook certificate and registration); last answer: %s", last)
}

// cleanupRegistration removes what local mode registered, so that the
// Gizmo CRD serves without the webhooks again.
func cleanupRegistration(t *testing.T, name string) {
	t.Cleanup(func() {
		ctx := context.Background()
		cs := env.Clientset()
		_ = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, webhook.ValidatingConfigurationName(name), metav1.DeleteOptions{})
		_ = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, webhook.MutatingConfigurationName(name), metav1.DeleteOptions{})
		dyn := dynamic.NewForConfigOrDie(env.Config)
		patch := []byte(`{"spec":{"conversion":{"strategy":"None","webhook":null}}}`)
		_, err := dyn.Resource(crdsGVR).Patch(ctx, "gizmos.whtest.opgen.dev", "application/merge-patch+json", patch, metav1.PatchOptions{})
		assert.NoError(t, err)
	})
}

func unstructuredGizmo(gv schema.GroupVersion, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gv.String(), "kind": "Gizmo",
		"metadata": map[string]any{"name": name},
		"spec":     spec,
	}}
}

type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	w.list = append(w.list, text)
	w.mu.Unlock()
}

func TestWebhooksThroughTheAPIServer(t *testing.T) {
	ctx := context.Background()
	name := "gizmo-" + rand.String(5)
	cleanupRegistration(t, name)
	op, stop := runningOperator(t, name)
	ns := env.Namespace(t)

	cfg := rest.CopyConfig(env.Config)
	warned := &warnings{}
	cfg.WarningHandlerWithContext = warned
	dyn := dynamic.NewForConfigOrDie(cfg)
	v1 := dyn.Resource(gizmosV1).Namespace(ns)
	alpha := dyn.Resource(gizmosV1alpha1).Namespace(ns)

	crd, err := env.Clientset().Discovery().RESTClient().Get().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.whtest.opgen.dev").DoRaw(ctx)
	require.NoError(t, err)
	assert.Contains(t, string(crd), `"strategy":"Webhook"`, "local mode points the CRD's conversion at the operator")

	t.Run("rejection message", func(t *testing.T) {
		_, err := v1.Create(ctx, unstructuredGizmo(gizmoV1, "big", map[string]any{"size": int64(11)}), metav1.CreateOptions{})
		require.Error(t, err)
		assert.Equal(t, `admission webhook "vgizmo.whtest.opgen.dev" denied the request: Gizmo.whtest.opgen.dev "big" is invalid: spec.size: Invalid value: 11: must be at most 10`, err.Error())

		_, err = v1.Create(ctx, unstructuredGizmo(gizmoV1, "slow", map[string]any{"size": int64(7)}), metav1.CreateOptions{})
		require.NoError(t, err)
		assert.Contains(t, warned.list, "spec.size above 5 is slow", "the webhook's warning reaches the client")

		_, err = v1.Create(ctx, unstructuredGizmo(gizmoV1, "boom", map[string]any{"color": "panic"}), metav1.CreateOptions{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "webhook vgizmo.whtest.opgen.dev panicked: validating a panic-colored gizmo", "a panic is a rejection with a message")
	})

	t.Run("defaults on create", func(t *testing.T) {
		got, err := v1.Create(ctx, unstructuredGizmo(gizmoV1, "plain", map[string]any{"size": int64(1)}), metav1.CreateOptions{})
		require.NoError(t, err)
		assert.Equal(t, map[string]any{"size": int64(1), "color": "blue", "state": "Open"}, got.Object["spec"])
	})

	t.Run("conversion round trip", func(t *testing.T) {
		spec := map[string]any{"size": int64(2), "color": "red", "done": true, "tags": []any{"a", "b"}}
		_, err := alpha.Create(ctx, unstructuredGizmo(gizmoV1alpha1, "old", spec), metav1.CreateOptions{})
		require.NoError(t, err, "created in v1alpha1: converted to v1 for the webhooks and for storage")
		asV1, err := v1.Get(ctx, "old", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, map[string]any{"size": int64(2), "color": "red", "state": "Done", "tags": []any{"a", "b"}}, asV1.Object["spec"])
		asAlpha, err := alpha.Get(ctx, "old", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, spec, asAlpha.Object["spec"], "v1alpha1 → v1 → v1alpha1 loses no field")
		assert.Equal(t, asV1.GetResourceVersion(), asAlpha.GetResourceVersion())
		assert.Equal(t, asV1.GetUID(), asAlpha.GetUID())
	})

	const many = 1000
	t.Run("a list of 1000 through conversion", func(t *testing.T) {
		createMany(t, v1, many)
		list, err := alpha.List(ctx, metav1.ListOptions{LabelSelector: "batch=many"})
		require.NoError(t, err)
		require.Len(t, list.Items, many)
		for _, it := range list.Items {
			require.Equal(t, gizmoV1alpha1.String(), it.GetAPIVersion())
			require.Equal(t, map[string]any{"size": int64(3), "color": "green", "tags": []any{it.GetName()}}, it.Object["spec"], it.GetName())
		}
	})

	reg := op.Registry()
	assert.Positive(t, metricValue(t, reg, "opgen_webhook_requests_total", "webhook", "convert", "result", "converted"))
	assert.GreaterOrEqual(t, metricValue(t, reg, "opgen_webhook_requests_total", "webhook", "mgizmo.whtest.opgen.dev", "result", "allowed"), float64(many))
	assert.InDelta(t, 1, metricValue(t, reg, "opgen_webhook_rejections_total", "webhook", "vgizmo.whtest.opgen.dev", "operation", "CREATE", "code", "422"), 0)

	t.Run("operator stopped", func(t *testing.T) {
		stop()
		_, err := v1.Create(ctx, unstructuredGizmo(gizmoV1, "while-down", map[string]any{"size": int64(1)}), metav1.CreateOptions{})
		require.Error(t, err, "failurePolicy Fail: no write is admitted unchecked")
		assert.Contains(t, err.Error(), `Internal error occurred: failed calling webhook "mgizmo.whtest.opgen.dev"`)
		assert.Contains(t, err.Error(), "connect: connection refused", "the message says the webhook is not there")
		_, err = alpha.Get(ctx, "old", metav1.GetOptions{})
		require.Error(t, err, "reading another version needs the conversion webhook")
		assert.Contains(t, err.Error(), "conversion webhook for whtest.opgen.dev/v1, Kind=Gizmo failed")

		stored, err := v1.List(ctx, metav1.ListOptions{LabelSelector: "batch=many"})
		require.NoError(t, err, "the storage version reads without the operator")
		assert.Len(t, stored.Items, many, "nothing is lost")

		// The operator comes back on another port and registers again.
		runningOperator(t, name)
		_, err = v1.Create(ctx, unstructuredGizmo(gizmoV1, "after", map[string]any{}), metav1.CreateOptions{})
		require.NoError(t, err)
		got, err := alpha.Get(ctx, "old", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, true, got.Object["spec"].(map[string]any)["done"])
	})
}

// createMany creates n Gizmos in v1 (each through both admission
// webhooks), with a few clients at once.
func createMany(t *testing.T, c dynamic.ResourceInterface, n int) {
	t.Helper()
	ctx := context.Background()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				name := fmt.Sprintf("many-%04d", i)
				obj := unstructuredGizmo(gizmoV1, name, map[string]any{"size": int64(3), "color": "green", "tags": []any{name}})
				obj.SetLabels(map[string]string{"batch": "many"})
				if _, err := c.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	require.Empty(t, errs)
}
