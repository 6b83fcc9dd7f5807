package ctrlbridge_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/testenv"
	"github.com/opgen-sdk/opgen/test/testkit"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

var env = testenv.New(testenv.Options{CRDDirs: []string{"../../../test/testkit/testapi/crd"}})

func TestMain(m *testing.M) {
	if os.Getenv(measureModeEnv) != "" {
		os.Exit(m.Run()) // a measured process: the control plane is the parent's
	}
	env.Main(m)
}

const gadgets = 3

// TestOneBinaryTwoRuntimes runs gadget as a controller-runtime reconciler
// and echo as an opgen controller in one manager: one Lease, one /metrics
// with both sides' series, one /readyz that follows both, and a shutdown
// bounded though an opgen handler is in flight. Then the next run of the
// binary has gadget moved to opgen: the objects the reconciler wrote
// converge under opgen, and the steady state writes nothing.
func TestOneBinaryTwoRuntimes(t *testing.T) {
	ns := env.Namespace(t)
	w := &writes{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(w.wrap)
	httpClient, err := rest.HTTPClientFor(env.Config)
	require.NoError(t, err)
	client, err := testapi.NewForConfigAndClient(env.Config, httpClient)
	require.NoError(t, err)
	for i := range gadgets {
		g := &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("g%d", i), Namespace: ns}, Spec: testapi.GadgetSpec{Size: int32(i + 1), Message: "hello"}}
		_, err := client.Gadgets(ns).Create(context.Background(), g, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	echoed(t, ns, "e0")

	p := start(t, cfg, ns, options{moved: false})
	waitConverged(t, ns, client, func(*corev1.ConfigMap) bool { return true })
	oneLease(t, ns)
	bothSidesOnMetrics(t, p.metrics, "controller_runtime_reconcile_total", "controller", "gadget", "result", "success")
	standbyWaits(t, cfg, ns, p)
	readyzFollowsOpgen(t, p)
	boundedShutdown(t, ns, p)

	p = start(t, cfg, ns, options{moved: true})
	waitConverged(t, ns, client, appliedByOpgen)
	bothSidesOnMetrics(t, p.metrics, "opgen_reconcile_total", "controller", "gadget")
	steady(t, p, w, 5*time.Second)
	require.NoError(t, p.stop())
}

// echoed creates a ConfigMap for echo and waits for nothing.
func echoed(t *testing.T, ns, name string, annotations ...string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{echoLabel: "true"}, Annotations: map[string]string{}}, Data: map[string]string{"k": "v"}}
	for i := 0; i+1 < len(annotations); i += 2 {
		cm.Annotations[annotations[i]] = annotations[i+1]
	}
	_, err := env.Clientset().CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{})
	require.NoError(t, err)
}

// waitConverged waits until every Gadget is Ready with its count and an
// observed generation when opgen handles it, its ConfigMap holds its data
// and satisfies done, and e0's Secret exists.
func waitConverged(t *testing.T, ns string, client *testapi.Clientset, done func(*corev1.ConfigMap) bool) {
	t.Helper()
	ctx := context.Background()
	cs := env.Clientset()
	eventually(t, "every Gadget Ready with its ConfigMap, and e0's Secret", func() bool {
		for i := range gadgets {
			g, err := client.Gadgets(ns).Get(ctx, fmt.Sprintf("g%d", i), metav1.GetOptions{})
			if err != nil || g.Status.Phase != "Ready" || g.Status.Count != g.Spec.Size {
				return false
			}
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, g.Name+"-gadget", metav1.GetOptions{})
			if err != nil || cm.Data["message"] != "hello" || !metav1.IsControlledBy(cm, g) || !done(cm) {
				return false
			}
		}
		_, err := cs.CoreV1().Secrets(ns).Get(ctx, "e0-echo", metav1.GetOptions{})
		return err == nil
	})
}

// appliedByOpgen: opgen's field manager applied the ConfigMap.
func appliedByOpgen(cm *corev1.ConfigMap) bool {
	for _, e := range cm.ManagedFields {
		if e.Manager == operatorName && e.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}

// oneLease: the manager's Lease is the only one; opgen holds none.
func oneLease(t *testing.T, ns string) {
	t.Helper()
	leases, err := env.Clientset().CoordinationV1().Leases(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, leases.Items, 1, "one Lease for both runtimes")
	l := leases.Items[0]
	assert.Equal(t, leaseName, l.Name)
	assert.NotEmpty(t, ptrValue(l.Spec.HolderIdentity), "the manager holds it")
}

// standbyWaits starts a second replica beside the leader p: its caches
// fill and it is ready, but its opgen controllers do not work, for the
// Lease is p's. (Its /metrics is not read: two replicas in one test
// process share controller-runtime's global registry, where each serves
// client-go's process-wide series.)
func standbyWaits(t *testing.T, cfg *rest.Config, ns string, p *process) {
	t.Helper()
	standby := start(t, cfg, ns, options{moved: false})
	eventually(t, "the standby to be ready (its caches synced)", func() bool {
		return get(standby.health+"/readyz") == http.StatusOK
	})
	assert.True(t, p.op.Leading(), "the leader's opgen controllers work")
	assert.False(t, standby.op.Leading(), "the standby's opgen controllers wait for the manager's election")
	require.NoError(t, standby.stop())
}

// bothSidesOnMetrics: the manager's /metrics has both runtimes' series,
// each family once (the parser refuses a family twice), and gadget's
// reconciles (a metric and its labels) under the runtime that runs it.
func bothSidesOnMetrics(t *testing.T, url string, gadget ...string) {
	t.Helper()
	families := scrape(t, url)
	for _, want := range []struct {
		name   string
		labels []string
	}{
		{gadget[0], gadget[1:]},
		{"opgen_reconcile_total", []string{"controller", "echo"}},
		{"opgen_leader", nil},
		{"leader_election_master_status", []string{"name", leaseName}},
		{"rest_client_requests_total", nil},
		{"go_goroutines", nil},
	} {
		assert.Positive(t, value(families[want.name], want.labels...), "%s%v on %s", want.name, want.labels, url)
	}
}

// readyzFollowsOpgen: the manager's /readyz fails, naming opgen's check,
// while one of the operator's ready checks fails, and passes again after.
func readyzFollowsOpgen(t *testing.T, p *process) {
	t.Helper()
	code, text := body(t, p.health+"/readyz?verbose")
	require.Equal(t, http.StatusOK, code, text)
	require.Contains(t, text, "[+]opgen ok")
	require.Contains(t, text, "[+]ping ok")
	p.notReady.set(true)
	code, text = body(t, p.health+"/readyz?verbose")
	assert.Equal(t, http.StatusInternalServerError, code, text)
	assert.Contains(t, text, "[-]opgen failed")
	p.notReady.set(false)
	eventually(t, "/readyz to pass again (the operator caches its answer for a second)", func() bool {
		return get(p.health+"/readyz") == http.StatusOK
	})
}

// boundedShutdown stops the process while an echo handler runs: the
// operator waits ShutdownTimeout (5s) for it, then cancels it; the
// manager returns within its GracefulShutdownTimeout (10s) and releases
// the Lease.
func boundedShutdown(t *testing.T, ns string, p *process) {
	t.Helper()
	slowStarted.Store(false)
	echoed(t, ns, "slow", sleepAnnotation, "1m")
	eventually(t, "echo's handler to start on the slow ConfigMap", slowStarted.Load)
	began := time.Now()
	require.NoError(t, p.stop())
	took := time.Since(began)
	t.Logf("shutdown with a handler in flight took %s", took.Round(time.Millisecond))
	assert.GreaterOrEqual(t, took, 5*time.Second, "the in-flight handler had ShutdownTimeout to finish")
	assert.Less(t, took, 10*time.Second, "within the manager's GracefulShutdownTimeout")
	assert.False(t, p.op.Leading(), "the operator stopped working")
	l, err := env.Clientset().CoordinationV1().Leases(ns).Get(context.Background(), leaseName, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, ptrValue(l.Spec.HolderIdentity), "the Lease was released")
	require.NoError(t, env.Clientset().CoreV1().ConfigMaps(ns).Delete(context.Background(), "slow", metav1.DeleteOptions{}))
}

// steady: the process writes nothing for d, while gadget reconciles its
// objects every second.
func steady(t *testing.T, p *process, w *writes, d time.Duration) {
	t.Helper()
	n := w.count()
	before := value(scrape(t, p.metrics)["opgen_reconcile_total"], "controller", "gadget", "verb", "Reconcile")
	t.Logf("checking that the converged objects get no write for %s", d)
	time.Sleep(d)
	assert.Empty(t, w.since(n), "writes in the steady state")
	after := value(scrape(t, p.metrics)["opgen_reconcile_total"], "controller", "gadget", "verb", "Reconcile")
	assert.GreaterOrEqual(t, after-before, float64(gadgets), "each Gadget was reconciled meanwhile")
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	code, text := body(t, url)
	require.Equal(t, http.StatusOK, code, text)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	require.NoError(t, err, "the manager's /metrics")
	return families
}

// value is the first series of f whose labels include the pairs given:
// a counter's or gauge's value; 0 when there is none.
func value(f *dto.MetricFamily, labels ...string) float64 {
	if f == nil {
		return 0
	}
next:
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if got[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Untyped != nil:
			return m.Untyped.GetValue()
		}
	}
	return 0
}

func ptrValue(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, what, cond)
}
