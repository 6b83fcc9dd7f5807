package runtime

import (
	"bytes"
	"encoding/json"
	"flag"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// Not parallel: these tests set environment variables.

func TestOptionsDefaults(t *testing.T) {
	t.Setenv(EnvWatchNamespace, "")
	t.Setenv(EnvPodNamespace, "operators")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	o, err := Options{Name: "op"}.complete()
	require.NoError(t, err)
	assert.Equal(t, []string{AllNamespaces}, o.Namespaces)
	assert.Equal(t, ":0", o.MetricsAddr, "no fixed port")
	assert.Equal(t, ":0", o.HealthAddr, "no fixed port")
	assert.Equal(t, 30*time.Second, o.ShutdownTimeout)
	assert.Equal(t, 2, o.Workers)
	assert.Equal(t, "operators", o.LeaderElection.Namespace)
	assert.Equal(t, "op", o.LeaderElection.LeaseName)
	assert.Equal(t, 15*time.Second, o.LeaderElection.LeaseDuration)
	assert.NotEmpty(t, o.LeaderElection.Identity)
	assert.NotNil(t, o.Clock)
	assert.False(t, o.Logger.IsZero())

	// Not even in a Pod (a test run in CI may be one): the generated
	// manifest passes its ports as flags.
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
	o, err = Options{Name: "op"}.complete()
	require.NoError(t, err)
	assert.Equal(t, ":0", o.MetricsAddr, "no fixed port in a Pod either")
	assert.Equal(t, ":0", o.HealthAddr, "no fixed port in a Pod either")
}

func TestOptionsFromEnvironment(t *testing.T) {
	t.Setenv(EnvPodNamespace, "operators")
	for env, want := range map[string][]string{
		"all":        {AllNamespaces},
		"a,b":        {"a", "b"},
		" a , b ":    {"a", "b"},
		"a,all":      {AllNamespaces},
		"single-one": {"single-one"},
	} {
		t.Setenv(EnvWatchNamespace, env)
		o, err := Options{Name: "op"}.complete()
		require.NoError(t, err)
		assert.Equal(t, want, o.Namespaces, "%s=%q", EnvWatchNamespace, env)
	}
	t.Setenv(EnvWatchNamespace, "from-env")
	o, err := Options{Name: "op", Namespaces: []string{"from-code"}}.complete()
	require.NoError(t, err)
	assert.Equal(t, []string{"from-code"}, o.Namespaces, "a field set in code wins over the environment")
	assert.Equal(t, metav1.NamespaceAll, AllNamespaces)
}

func TestOptionsErrorsSayWhatToFix(t *testing.T) {
	t.Setenv(EnvPodNamespace, "")
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"no name", Options{}, []string{"Options.Name"}},
		{"no lease namespace", Options{Name: "op"}, []string{EnvPodNamespace, "Options.LeaderElection.Namespace", "--leader-elect=false"}},
		{"lease shorter than renew", Options{Name: "op", LeaderElection: LeaderElectionOptions{Namespace: "x", LeaseDuration: 5 * time.Second, RenewDeadline: 5 * time.Second}},
			[]string{"LeaseDuration", "RenewDeadline"}},
		{"renew shorter than retry", Options{Name: "op", LeaderElection: LeaderElectionOptions{Namespace: "x", RenewDeadline: 2 * time.Second, RetryPeriod: 2 * time.Second}},
			[]string{"RenewDeadline", "RetryPeriod"}},
		{"negative workers", Options{Name: "op", Workers: -1}, []string{"Options.Workers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.opts.complete()
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	_, err := Options{Name: "op", LeaderElection: LeaderElectionOptions{Disabled: true}}.complete()
	assert.NoError(t, err, "no lease namespace is needed without election")
}

func TestGenerationOrMetadataChanged(t *testing.T) {
	base := func() *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Generation: 1, ResourceVersion: "1", Labels: map[string]string{"a": "b"}}
	}
	now := metav1.Now()
	tests := []struct {
		name   string
		change func(m *metav1.ObjectMeta)
		want   bool
	}{
		{"resourceVersion only (a status write)", func(m *metav1.ObjectMeta) { m.ResourceVersion = "2" }, false},
		{"generation", func(m *metav1.ObjectMeta) { m.Generation = 2 }, true},
		{"deletion", func(m *metav1.ObjectMeta) { m.DeletionTimestamp = &now }, true},
		{"finalizers", func(m *metav1.ObjectMeta) { m.Finalizers = []string{"f"} }, true},
		{"labels", func(m *metav1.ObjectMeta) { m.Labels = map[string]string{"a": "c"} }, true},
		{"annotations", func(m *metav1.ObjectMeta) { m.Annotations = map[string]string{"x": "y"} }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := base()
			tt.change(n)
			assert.Equal(t, tt.want, GenerationOrMetadataChanged(base(), n))
		})
	}
}

func TestDefaultFinalizer(t *testing.T) {
	assert.Equal(t, "hello.example.com/finalizer", defaultFinalizer(schema.GroupVersionKind{Group: "hello.example.com", Version: "v1", Kind: "Greeting"}))
	assert.Equal(t, "configmap.opgen.dev/finalizer", defaultFinalizer(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}))
}

func TestFullKinds(t *testing.T) {
	got := fullKinds(map[reflect.Type]bool{reflect.TypeOf(&corev1.ConfigMap{}): true, reflect.TypeOf(&appsv1.Deployment{}): true})
	assert.True(t, got[corev1.SchemeGroupVersion.WithKind("ConfigMap")])
	assert.True(t, got[appsv1.SchemeGroupVersion.WithKind("Deployment")])
	assert.False(t, got[corev1.SchemeGroupVersion.WithKind("Secret")])
}

func TestSilentLogger(t *testing.T) {
	silent := logr.FromSlogHandler(slog.DiscardHandler)
	o, err := Options{Name: "op", Logger: silent, LeaderElection: LeaderElectionOptions{Disabled: true}}.complete()
	require.NoError(t, err)
	assert.Equal(t, silent, o.Logger)
}

func TestRuntimeFlags(t *testing.T) {
	t.Setenv(EnvPodNamespace, "operators")
	var o Options
	fs := flag.NewFlagSet("op", flag.ContinueOnError)
	o.BindFlags(fs)
	require.NoError(t, fs.Parse([]string{"--pprof-bind-address=127.0.0.1:6060", "--log-format=json", "-v=2"}))
	assert.Equal(t, "127.0.0.1:6060", o.PprofAddr)
	assert.Equal(t, "json", o.LogFormat)
	assert.Equal(t, 2, o.Verbosity)

	o.Name = "op"
	var buf bytes.Buffer
	o.LogOutput = &buf
	c, err := o.complete()
	require.NoError(t, err)
	c.Logger.V(2).Info("shown", "k", "v")
	c.Logger.V(3).Info("hidden")
	var line map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &line), buf.String())
	assert.Equal(t, "shown", line["msg"])
	assert.NotContains(t, buf.String(), "hidden")

	assert.Empty(t, Options{Name: "op"}.PprofAddr, "pprof is off by default")
	_, err = Options{Name: "op", LogFormat: "yaml"}.complete()
	assert.ErrorContains(t, err, `Options.LogFormat (--log-format) is "yaml"; use "text" or "json"`)
	_, err = Options{Name: "op", Verbosity: -1}.complete()
	assert.ErrorContains(t, err, "Options.Verbosity (-v) is -1")
}

// TestClientLimits: --kube-api-qps and --kube-api-burst set the REST
// config's limits; without them a config's own limits stay, and a config
// with none gets the defaults.
func TestClientLimits(t *testing.T) {
	var o Options
	fs := flag.NewFlagSet("op", flag.ContinueOnError)
	o.BindFlags(fs)
	require.NoError(t, fs.Parse([]string{"--kube-api-qps=12.5", "--kube-api-burst=30"}))
	cfg := &rest.Config{QPS: 5, Burst: 10}
	clientLimits(cfg, o)
	assert.Equal(t, float32(12.5), cfg.QPS)
	assert.Equal(t, 30, cfg.Burst)

	cfg = &rest.Config{QPS: 5, Burst: 10}
	clientLimits(cfg, Options{})
	assert.Equal(t, float32(5), cfg.QPS, "the config's own limit stays")
	assert.Equal(t, 10, cfg.Burst)

	cfg = &rest.Config{}
	clientLimits(cfg, Options{})
	assert.Equal(t, DefaultKubeAPIQPS, cfg.QPS)
	assert.Equal(t, DefaultKubeAPIBurst, cfg.Burst)

	cfg = &rest.Config{}
	clientLimits(cfg, Options{KubeAPIQPS: -1})
	assert.Equal(t, float32(-1), cfg.QPS, "negative: no client-side limit")

	_, err := Options{Name: "op", KubeAPIBurst: -1}.complete()
	assert.ErrorContains(t, err, "Options.KubeAPIBurst (--kube-api-burst) is -1")
}

// TestPreviewFlags: --preview turns election, sharding and every server
// off, so that a preview needs no Lease namespace and listens nowhere.
func TestPreviewFlags(t *testing.T) {
	t.Setenv(EnvPodNamespace, "")
	o := Options{Name: "op", Sharding: true}
	fs := flag.NewFlagSet("op", flag.ContinueOnError)
	o.BindFlags(fs)
	require.NoError(t, fs.Parse([]string{"--preview", "--preview-format=json", "--metrics-bind-address=:8443"}))
	c, err := o.complete()
	require.NoError(t, err, "no lease namespace is needed, and sharding is off")
	assert.True(t, c.Preview.Enabled)
	assert.Equal(t, "json", c.Preview.Format)
	assert.NotNil(t, c.Preview.Output, "stdout")
	assert.True(t, c.LeaderElection.Disabled)
	assert.False(t, c.Sharding)
	assert.Equal(t, []string{"0", "0", "", "0"}, []string{c.MetricsAddr, c.HealthAddr, c.PprofAddr, c.Webhook.Addr})

	c, err = Options{Name: "op", Preview: PreviewOptions{Enabled: true}}.complete()
	require.NoError(t, err)
	assert.Equal(t, "yaml", c.Preview.Format, "the default")
	_, err = Options{Name: "op", Preview: PreviewOptions{Enabled: true, Format: "xml"}}.complete()
	assert.ErrorContains(t, err, `Options.Preview.Format (--preview-format) is "xml"; use "yaml" or "json"`)
}
