package helmcheck

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"helm.sh/helm/v4/pkg/strvals"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/pkg/manifest"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

var env = testenv.New(testenv.Options{})

func TestMain(m *testing.M) { env.Main(m) }

func options() manifest.Options {
	return manifest.Options{
		Name:      "widget-operator",
		Namespace: "widget-system",
		Image:     "example.com/widget-operator:v1",
		Labels:    map[string]string{"app.kubernetes.io/part-of": "widgets"},
		ConfigDir: "../../pkg/manifest/testdata/config",
	}
}

// render writes the chart of opts and renders it as helm template would,
// in namespace, with set as --set.
func render(t *testing.T, opts manifest.Options, namespace, set string) []byte {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "chart")
	_, err := manifest.WriteHelm(opts, dir)
	require.NoError(t, err)
	chrt, err := loader.LoadDir(dir)
	require.NoError(t, err)
	overrides := map[string]any{}
	require.NoError(t, strvals.ParseInto(set, overrides))
	values, err := util.ToRenderValues(chrt, overrides,
		common.ReleaseOptions{Name: "widgets", Namespace: namespace, IsInstall: true}, nil)
	require.NoError(t, err)
	files, err := engine.Render(chrt, values)
	require.NoError(t, err)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var out bytes.Buffer
	for _, name := range names {
		out.WriteString("\n---\n" + files[name])
	}
	return out.Bytes()
}

func flat(t *testing.T, opts manifest.Options) []byte {
	t.Helper()
	out, err := manifest.Build(opts)
	require.NoError(t, err)
	return out
}

// objectSet parses multi-document YAML into its objects keyed by kind,
// namespace and name; empty documents (a template rendered to nothing)
// are skipped.
func objectSet(t *testing.T, data []byte) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		var m map[string]any
		require.NoError(t, yaml.Unmarshal(doc, &m), string(doc))
		if m == nil {
			continue
		}
		meta, _ := m["metadata"].(map[string]any)
		ns, _ := meta["namespace"].(string)
		key := m["kind"].(string) + " " + ns + "/" + meta["name"].(string)
		require.NotContains(t, out, key, "the object is there twice")
		out[key] = m
	}
	return out
}

func assertSameObjects(t *testing.T, want, got []byte) {
	t.Helper()
	w, g := objectSet(t, want), objectSet(t, got)
	require.Equal(t, keys(w), keys(g))
	for k := range w {
		assert.Equal(t, w[k], g[k], k)
	}
}

func keys(m map[string]map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// withoutNamespace drops the Namespace document of a flat manifest: the
// chart leaves it to helm install --create-namespace by default.
func withoutNamespace(t *testing.T, data []byte) []byte {
	t.Helper()
	docs := bytes.Split(data, []byte("\n---\n"))
	require.Contains(t, string(docs[0]), "kind: Namespace")
	return bytes.Join(docs[1:], []byte("\n---\n"))
}

func TestDefaultValuesRenderTheFlatManifest(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]manifest.Options{
		"with-image":    options(),
		"without-image": func() manifest.Options { o := options(); o.Image = ""; return o }(),
		// Two replicas and a PodDisruptionBudget by default.
		"webhooks": func() manifest.Options {
			o := options()
			o.ConfigDir = "../../pkg/manifest/testdata/webhooks"
			return o
		}(),
		"non-defaults": func() manifest.Options {
			o := options()
			o.Replicas, o.ServiceAccount, o.LogFormat, o.Verbosity, o.NoLeaderElection = 2, "runner", "json", 3, true
			o.WatchNamespace = "a,b"
			o.MetricsInsecure, o.ServiceMonitor = true, true
			o.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
			return o
		}(),
		"sharded": func() manifest.Options {
			o := options()
			o.Sharding, o.ExtraArgs = true, []string{"--workers=8", "--name with=spaces"}
			return o
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := flat(t, opts)
			assertSameObjects(t, withoutNamespace(t, want), render(t, opts, opts.Namespace, ""))
			assertSameObjects(t, want, render(t, opts, opts.Namespace, "createNamespace=true"))
		})
	}
}

// TestValuesChangeTheObjects sets each value as helm install --set would
// and compares with the flat manifest of the same settings.
func TestValuesChangeTheObjects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		set    string
		change func(*manifest.Options)
	}{
		{"image=other.example.com/w:v2", func(o *manifest.Options) { o.Image = "other.example.com/w:v2" }},
		{"replicas=3", func(o *manifest.Options) { o.Replicas = 3 }},
		{"serviceAccount.name=runner", func(o *manifest.Options) { o.ServiceAccount = "runner" }},
		{"resources.requests.cpu=100m,resources.limits.memory=1Gi", func(o *manifest.Options) {
			o.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
			o.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
		}},
		{"watchNamespace=team-a\\,team-b", func(o *manifest.Options) { o.WatchNamespace = "team-a,team-b" }},
		{"leaderElection=false", func(o *manifest.Options) { o.NoLeaderElection = true }},
		{"logFormat=json,verbosity=4", func(o *manifest.Options) { o.LogFormat, o.Verbosity = "json", 4 }},
		{"shutdownTimeoutSeconds=60", func(o *manifest.Options) { o.ShutdownTimeout = time.Minute }},
		{"", func(o *manifest.Options) { o.Namespace = "elsewhere" }}, // helm install -n elsewhere
		{"metrics.secure=false", func(o *manifest.Options) { o.MetricsInsecure = true }},
		{"metrics.serviceMonitor=true", func(o *manifest.Options) { o.ServiceMonitor = true }},
		{"metrics.serviceMonitor=true,metrics.secure=false", func(o *manifest.Options) { o.ServiceMonitor, o.MetricsInsecure = true, true }},
		{"sharding=true,replicas=2", func(o *manifest.Options) { o.Sharding, o.Replicas = true, 2 }},
		{"extraArgs={--workers=8,--kube-api-qps=50}", func(o *manifest.Options) { o.ExtraArgs = []string{"--workers=8", "--kube-api-qps=50"} }},
	} {
		t.Run(tc.set, func(t *testing.T) {
			t.Parallel()
			opts := options()
			changed := options()
			tc.change(&changed)
			got := render(t, opts, changed.Namespace, tc.set)
			want := withoutNamespace(t, flat(t, changed))
			assertSameObjects(t, want, got)
			assert.NotEqual(t, objectSet(t, withoutNamespace(t, flat(t, opts))), objectSet(t, got), "the value changes something")
		})
	}
}

func TestValuesThatLeaveObjectsOut(t *testing.T) {
	t.Parallel()
	kinds := func(data []byte) []string {
		var out []string
		for k := range objectSet(t, data) {
			out = append(out, strings.Fields(k)[0])
		}
		sort.Strings(out)
		return out
	}
	opts := options()
	all := kinds(render(t, opts, opts.Namespace, ""))
	assert.Contains(t, all, "CustomResourceDefinition")
	assert.NotContains(t, kinds(render(t, opts, opts.Namespace, "crds.install=false")), "CustomResourceDefinition")
	assert.NotContains(t, kinds(render(t, opts, opts.Namespace, "serviceAccount.create=false")), "ServiceAccount")
	assert.NotContains(t, kinds(render(t, opts, opts.Namespace, "image=")), "Deployment")

	crd := objectSet(t, render(t, opts, opts.Namespace, "crds.keep=true"))["CustomResourceDefinition /widgets.testenv.opgen.dev"]
	assert.Equal(t, map[string]any{"helm.sh/resource-policy": "keep"}, crd["metadata"].(map[string]any)["annotations"])

	metricsPort := objectSet(t, render(t, opts, opts.Namespace, "metrics.port=9090"))["Deployment widget-system/widget-operator"]
	rendered, err := yaml.Marshal(metricsPort)
	require.NoError(t, err)
	assert.Contains(t, string(rendered), "--metrics-bind-address=:9090")
	assert.Contains(t, string(rendered), "containerPort: 9090")
}

func TestServerAcceptsTheChart(t *testing.T) {
	t.Parallel()
	opts := options()
	ns := env.Namespace(t)
	path := filepath.Join(t.TempDir(), "rendered.yaml")
	require.NoError(t, os.WriteFile(path, render(t, opts, ns, "replicas=2,logFormat=json"), 0o600))
	cmd := exec.CommandContext(context.Background(), env.Binaries.Kubectl, "--kubeconfig", env.Kubeconfig,
		"apply", "--dry-run=server", "-f", path)
	got, err := cmd.CombinedOutput()
	require.NoError(t, err, string(got))
	for _, want := range []string{
		"customresourcedefinition.apiextensions.k8s.io/widgets.testenv.opgen.dev created (server dry run)",
		"serviceaccount/widget-operator created (server dry run)",
		"clusterrolebinding.rbac.authorization.k8s.io/widget-operator created (server dry run)",
		"deployment.apps/widget-operator created (server dry run)",
	} {
		assert.Contains(t, string(got), want)
	}
}
