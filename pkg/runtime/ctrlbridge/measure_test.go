package ctrlbridge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/builtin"
	"github.com/opgen-sdk/opgen/pkg/runtime/ctrlbridge"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// The memory of one process that runs both runtimes against the two
// processes it replaces, measured only when asked (a measurement, not a
// check):
//
//	OPGEN_MEASURE=1 go test ./pkg/runtime/ctrlbridge -run TestMeasureMemory -v -timeout 30m
//
// It creates measuredObjects Gadgets and as many echo ConfigMaps, then
// runs each mode in a process of its own (this test binary again) until
// every object was handled, and reads its RSS and live heap:
//
//   - cr: a manager with gadget as a controller-runtime reconciler;
//   - opgen: an operator alone (runtime.New, its own servers off) with echo;
//   - shared: a manager with both, the operator hosted by ctrlbridge;
//   - shared-nocopy: shared, with echo watching none of the ConfigMaps,
//     so that the difference to shared is what the second cache of the
//     ConfigMaps costs (the manager caches every ConfigMap for gadget's
//     Owns; echo caches the labelled ones again).
const (
	measureEnv      = "OPGEN_MEASURE"
	measureModeEnv  = "BRIDGE_MEASURE_MODE"
	measureKubeEnv  = "BRIDGE_MEASURE_KUBECONFIG"
	measureNSEnv    = "BRIDGE_MEASURE_NAMESPACE"
	measuredObjects = 1000
)

// sample is what a measured process reports.
type sample struct {
	Mode      string  `json:"mode"`
	RSSMiB    float64 `json:"rssMiB"`
	PeakMiB   float64 `json:"peakMiB"`
	HeapMiB   float64 `json:"heapMiB"`
	HandledIn string  `json:"handledIn"`
}

func TestMeasureMemory(t *testing.T) {
	if os.Getenv(measureEnv) == "" {
		t.Skip("a measurement, not a check: set " + measureEnv + "=1 to run it")
	}
	ns := env.Namespace(t)
	t.Logf("creating %d Gadgets and %d labelled ConfigMaps of 1 KiB", measuredObjects, measuredObjects)
	createObjects(t, ns)
	t.Logf("warm-up run (writes the children and statuses once): %+v", runMeasured(t, ns, "shared"))
	runs := map[string][]sample{}
	for range measureRuns {
		for _, mode := range []string{"cr", "opgen", "shared", "shared-nocopy"} {
			s := runMeasured(t, ns, mode)
			t.Logf("%+v", s)
			runs[mode] = append(runs[mode], s)
		}
	}
	rss := func(mode string) float64 { return median(runs[mode], func(s sample) float64 { return s.RSSMiB }) }
	heap := func(mode string) float64 { return median(runs[mode], func(s sample) float64 { return s.HeapMiB }) }
	t.Logf("medians of %d runs:", measureRuns)
	t.Logf("RSS: shared %.1f MiB against cr %.1f + opgen %.1f = %.1f MiB (%.2fx)", rss("shared"), rss("cr"), rss("opgen"), rss("cr")+rss("opgen"), rss("shared")/(rss("cr")+rss("opgen")))
	t.Logf("live heap: shared %.1f MiB against cr %.1f + opgen %.1f = %.1f MiB", heap("shared"), heap("cr"), heap("opgen"), heap("cr")+heap("opgen"))
	t.Logf("the second cache of %d ConfigMaps (shared - shared-nocopy): %.1f MiB of RSS, %.1f MiB of live heap", measuredObjects, rss("shared")-rss("shared-nocopy"), heap("shared")-heap("shared-nocopy"))
}

// measureRuns is how many times each mode runs; the medians are reported.
const measureRuns = 3

func median(samples []sample, f func(sample) float64) float64 {
	v := make([]float64, len(samples))
	for i, s := range samples {
		v[i] = f(s)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

func createObjects(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	httpClient, err := rest.HTTPClientFor(env.Config)
	require.NoError(t, err)
	gadgets, err := testapi.NewForConfigAndClient(env.Config, httpClient)
	require.NoError(t, err)
	data := map[string]string{"k": strings.Repeat("x", 1024)}
	for i := range measuredObjects {
		_, err := gadgets.Gadgets(ns).Create(ctx, &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("g%d", i), Namespace: ns}, Spec: testapi.GadgetSpec{Size: 1, Message: "hello"}}, metav1.CreateOptions{})
		require.NoError(t, err)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e%d", i), Namespace: ns, Labels: map[string]string{echoLabel: "true"}}, Data: data}
		_, err = env.Clientset().CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		require.NoError(t, err)
	}
}

// runMeasured runs this test binary as a measured process of mode.
func runMeasured(t *testing.T, ns, mode string) sample {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestMeasuredProcess$")
	cmd.Env = append(os.Environ(), measureModeEnv+"="+mode, measureKubeEnv+"="+env.Kubeconfig, measureNSEnv+"="+ns)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, "measured process %s", mode)
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		var s sample
		if json.Unmarshal(sc.Bytes(), &s) == nil && s.Mode == mode {
			return s
		}
	}
	t.Fatalf("measured process %s printed no sample:\n%s", mode, out)
	return sample{}
}

// TestMeasuredProcess is the body of a measured process; it runs only
// when TestMeasureMemory starts this binary for it.
func TestMeasuredProcess(t *testing.T) {
	mode := os.Getenv(measureModeEnv)
	if mode == "" {
		t.Skip("runs only as a process TestMeasureMemory starts (" + measureEnv + "=1)")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv(measureKubeEnv))
	require.NoError(t, err)
	ns := os.Getenv(measureNSEnv)
	handled := newTally()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	began := time.Now()
	done := make(chan error, 1)
	switch mode {
	case "opgen":
		op, err := runtime.New(cfg, runtime.Options{Name: operatorName, Namespaces: []string{ns}, MetricsAddr: "0", HealthAddr: "0",
			LeaderElection: runtime.LeaderElectionOptions{Disabled: true}, Logger: quiet()})
		require.NoError(t, err)
		registerEcho(t, op, echoLabel+"=true", handled)
		go func() { done <- op.Run(ctx) }()
	default:
		mgr := measuredManager(t, cfg, ns, handled)
		selector := echoLabel + "=true"
		if mode == "shared-nocopy" {
			selector = echoLabel + "=nothing"
		}
		if mode != "cr" {
			op, err := ctrlbridge.New(mgr, runtime.Options{Name: operatorName, Namespaces: []string{ns}})
			require.NoError(t, err)
			registerEcho(t, op, selector, handled)
		}
		go func() { done <- mgr.Start(ctx) }()
	}
	want := map[string]int{"cr": measuredObjects, "opgen": measuredObjects, "shared": 2 * measuredObjects, "shared-nocopy": measuredObjects}[mode]
	require.Eventually(t, func() bool { return handled.count() >= want }, 5*time.Minute, 100*time.Millisecond, "every object handled")
	took := time.Since(began)
	time.Sleep(2 * time.Second) // the informers' and queues' last allocations settle
	s := measure(mode)
	s.HandledIn = took.Round(time.Millisecond).String()
	line, err := json.Marshal(s)
	require.NoError(t, err)
	fmt.Println(string(line))
	cancel()
	<-done
}

func measuredManager(t *testing.T, cfg *rest.Config, ns string, handled *tally) ctrl.Manager {
	t.Helper()
	scheme := k8sruntime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	require.NoError(t, testapi.AddToScheme(scheme))
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme, Logger: quiet(), Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	require.NoError(t, err)
	r := &gadgetReconciler{Client: mgr.GetClient(), Scheme: scheme}
	require.NoError(t, ctrl.NewControllerManagedBy(mgr).For(&testapi.Gadget{}).Owns(&corev1.ConfigMap{}).Named("gadget").
		Complete(counted{r, handled}))
	return mgr
}

// counted counts the Gadgets a reconciler handled.
type counted struct {
	r       *gadgetReconciler
	handled *tally
}

func (c counted) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := c.r.Reconcile(ctx, req)
	if err == nil {
		c.handled.add("gadget/" + req.Name)
	}
	return res, err
}

func registerEcho(t *testing.T, op *runtime.Operator, selector string, handled *tally) {
	t.Helper()
	_, err := runtime.Register(op, builtin.ConfigMaps(op, builtin.Options{LabelSelector: selector}), countedEcho{handled},
		runtime.ControllerOptions[*corev1.ConfigMap]{Name: "echo", Owns: []schema.GroupVersionKind{secretGVK}})
	require.NoError(t, err)
}

// countedEcho is echo, counting the ConfigMaps it handled.
type countedEcho struct{ handled *tally }

func (c countedEcho) Reconcile(ctx context.Context, a *plug.Action[*corev1.ConfigMap]) error {
	if err := (echo{}).Reconcile(ctx, a); err != nil {
		return err
	}
	c.handled.add("echo/" + a.Object.Name)
	return nil
}

// tally counts distinct keys.
type tally struct {
	mu   sync.Mutex
	keys map[string]bool
}

func newTally() *tally { return &tally{keys: map[string]bool{}} }

func (t *tally) add(k string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.keys[k] = true
}

func (t *tally) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.keys)
}

// quiet drops every log line: a zero logr.Logger would mean the default.
func quiet() logr.Logger { return logr.FromSlogHandler(slog.DiscardHandler) }

// measure reads the process's RSS and peak RSS (VmRSS, VmHWM) and its
// live heap after a collection.
func measure(mode string) sample {
	goruntime.GC()
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	s := sample{Mode: mode, HeapMiB: mib(m.HeapAlloc)}
	status, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(status), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		kb, _ := strconv.ParseUint(fields[1], 10, 64)
		switch fields[0] {
		case "VmRSS:":
			s.RSSMiB = mib(kb * 1024)
		case "VmHWM:":
			s.PeakMiB = mib(kb * 1024)
		}
	}
	return s
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
