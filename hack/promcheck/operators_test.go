package promcheck

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/fleet"
	"github.com/opgen-sdk/opgen/pkg/webhook"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

var quiet = logr.FromSlogHandler(slog.DiscardHandler)

func election(ns, identity string) runtime.LeaderElectionOptions {
	return runtime.LeaderElectionOptions{Namespace: ns, Identity: identity,
		LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond}
}

func servers(o runtime.Options) runtime.Options {
	o.MetricsAddr, o.MetricsInsecure, o.HealthAddr, o.Logger = "127.0.0.1:0", true, "127.0.0.1:0", quiet
	return o
}

// gadgets handles Gadgets by their spec.message: "fail" fails, "slow"
// waits past the action timeout, anything else writes a status. So the
// error, retry, timeout and write series all have something to count.
func gadgets(op *runtime.Operator) error {
	kind, err := testapi.KindFor(op)
	if err != nil {
		return err
	}
	_, err = runtime.Register(op, kind, plug.Handler[*testapi.Gadget](plug.HandlerFuncs[*testapi.Gadget]{
		OnReconcile: func(ctx context.Context, a *plug.Action[*testapi.Gadget]) error {
			switch a.Object.Spec.Message {
			case "fail":
				return errors.New("failing, as the test asks")
			case "slow":
				<-ctx.Done()
				return ctx.Err()
			}
			a.Object.Status.Phase = "Seen"
			return nil
		}}), runtime.ControllerOptions[*testapi.Gadget]{Name: "gadget", ActionTimeout: 200 * time.Millisecond})
	return err
}

// run runs op until the test ends and waits until it is ready.
func run(t *testing.T, op *runtime.Operator) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	testkit.Eventually(t, "the operator's /readyz to answer 200 (caches synced, leader elected, webhook certificate loaded)", func() bool {
		select {
		case err := <-done:
			t.Fatalf("the operator stopped before it was ready: %v", err)
		default:
		}
		return get(op.HealthAddr(), "/readyz") == http.StatusOK
	})
}

func get(addr, path string) int {
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// shardingOperator runs an operator that shards, serves a validating
// webhook (local mode) and handles Gadgets, and has it fail, time out,
// write, accept and reject; it returns its metrics address.
func shardingOperator(t *testing.T, ns string) string {
	name := "promcheck-" + rand.String(5)
	op, err := runtime.New(env.Config, servers(runtime.Options{
		Name: name, Namespaces: []string{ns}, Sharding: true, LeaderElection: election(ns, "one"),
		Webhook: runtime.WebhookOptions{Mode: runtime.WebhookModeLocal},
	}))
	require.NoError(t, err)
	require.NoError(t, gadgets(op))
	require.NoError(t, webhook.Validate(op, probeKind, probeValidator{}))
	t.Cleanup(func() { // local mode leaves its configuration at shutdown, on purpose
		_ = env.Clientset().AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), webhook.ValidatingConfigurationName(name), metav1.DeleteOptions{})
	})
	run(t, op)
	for _, message := range []string{"ok", "fail", "slow"} {
		createGadget(t, ns, message)
	}
	probes := dynamic.NewForConfigOrDie(env.Config).Resource(probeGVR).Namespace(ns)
	for mode, allowed := range map[string]bool{"accept": true, "reject": false} {
		_, err := probes.Create(context.Background(), &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": probeGVR.GroupVersion().String(), "kind": "Probe",
			"metadata": map[string]any{"name": mode}, "spec": map[string]any{"mode": mode},
		}}, metav1.CreateOptions{})
		require.Equal(t, allowed, err == nil, "Probe %s: %v", mode, err)
	}
	return op.MetricsAddr()
}

func createGadget(t *testing.T, ns, message string) {
	t.Helper()
	hc, err := rest.HTTPClientFor(env.Config)
	require.NoError(t, err)
	c, err := testapi.NewForConfigAndClient(env.Config, hc)
	require.NoError(t, err)
	_, err = c.Gadgets(ns).Create(context.Background(), &testapi.Gadget{
		ObjectMeta: metav1.ObjectMeta{Name: message},
		Spec:       testapi.GadgetSpec{Message: message},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
}

// brokenMember is a fleet's provider of one member cluster, "broken",
// whose operator's setup fails: the failure series has a count.
type brokenMember struct{ cfg *rest.Config }

func (b brokenMember) Run(ctx context.Context, _ *runtime.Operator, e fleet.Engager) error {
	e.Engage("broken", b.cfg)
	<-ctx.Done()
	return nil
}

// fleetOperator runs a fleet of the home cluster, which handles Gadgets,
// and a member that fails; it returns the fleet's metrics address.
func fleetOperator(t *testing.T, ns string) string {
	setup := func(op *runtime.Operator) error {
		if op.Options().Cluster == "broken" {
			return errors.New("this member's setup fails, as the test asks")
		}
		return gadgets(op)
	}
	opts := servers(runtime.Options{Name: "promcheck-fleet-" + rand.String(5), Namespaces: []string{ns}, LeaderElection: election(ns, "fleet")})
	f, err := fleet.New(env.Config, fleet.Options{Options: opts, Clusters: brokenMember{env.Config}, HomeCluster: "home"}, setup)
	require.NoError(t, err)
	run(t, f.Home())
	testkit.Eventually(t, "the fleet's home cluster engaged and ready", func() bool {
		op := f.Cluster("home")
		return op != nil && op.Ready()
	})
	return f.Home().MetricsAddr()
}

// clientRetry has client-go retry one request: the server answers 429
// with Retry-After first. client-go reports to process-wide metrics, which
// every operator's registry serves, so rest_client_request_retries_total,
// absent until something was retried, is in the scrapes.
func clientRetry(t *testing.T) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"retried"}}`))
	}))
	defer srv.Close()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	require.NoError(t, err)
	_, err = cs.CoreV1().Namespaces().Get(context.Background(), "retried", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, int32(2), calls.Load(), "client-go retried the 429 once")
}
