package manifest_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/pkg/manifest"
)

// objectSet parses multi-document YAML into its objects keyed by
// kind, namespace and name, so that two manifests compare whatever the
// order of their documents.
func objectSet(t *testing.T, data []byte) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		var m map[string]any
		require.NoError(t, yaml.Unmarshal(doc, &m))
		if m == nil {
			continue
		}
		meta, _ := m["metadata"].(map[string]any)
		key := m["kind"].(string) + " " + str(meta["namespace"]) + "/" + str(meta["name"])
		require.NotContains(t, out, key, "the object is there twice")
		out[key] = m
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func keys(m map[string]map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// copyConfig copies testdata/config into a new directory, with a sample,
// since the kustomize layout is written into the config directory.
func copyConfig(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "config")
	require.NoError(t, os.CopyFS(dir, os.DirFS("testdata/config")))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "samples"), 0o755))
	sample := "apiVersion: testenv.opgen.dev/v1\nkind: Widget\nmetadata:\n  name: widget-sample\nspec:\n  size: 1\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "samples", "testenv.opgen.dev_v1_widget.yaml"), []byte(sample), 0o644))
	return dir
}

func kustomizeBuild(t *testing.T, dir string) []byte {
	t.Helper()
	out, err := exec.CommandContext(context.Background(), env.Binaries.Kubectl, "kustomize", dir).CombinedOutput()
	require.NoError(t, err, string(out))
	return out
}

func TestKustomizeBuildsTheFlatManifest(t *testing.T) {
	t.Parallel()
	for name, change := range map[string]func(*manifest.Options){
		"with-image":              func(*manifest.Options) {},
		"without-image":           func(o *manifest.Options) { o.Image = "" },
		"other-account":           func(o *manifest.Options) { o.ServiceAccount = "runner"; o.Replicas = 3; o.LogFormat = "json" },
		"plain-metrics-monitored": func(o *manifest.Options) { o.MetricsInsecure = true; o.ServiceMonitor = true },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			opts := options()
			change(&opts)
			opts.ConfigDir = copyConfig(t)
			flat, err := manifest.Build(opts)
			require.NoError(t, err)

			_, err = manifest.WriteKustomize(opts) // gen's TestKustomizeLayoutIsNotStale checks the files' headers
			require.NoError(t, err)
			want := objectSet(t, flat)
			got := objectSet(t, kustomizeBuild(t, filepath.Join(opts.ConfigDir, "default")))
			require.Equal(t, keys(want), keys(got))
			for k := range want {
				assert.Equal(t, want[k], got[k], k)
			}

			samples := objectSet(t, kustomizeBuild(t, filepath.Join(opts.ConfigDir, "samples")))
			assert.Equal(t, []string{"Widget /widget-sample"}, keys(samples))
		})
	}
}

func TestKustomizeIsDeterministicAndPrunes(t *testing.T) {
	t.Parallel()
	opts := options()
	opts.ConfigDir = copyConfig(t)
	first, err := manifest.WriteKustomize(opts)
	require.NoError(t, err)
	contents := map[string][]byte{}
	for _, p := range first {
		contents[p], err = os.ReadFile(p)
		require.NoError(t, err)
	}
	assert.Contains(t, first, filepath.Join(opts.ConfigDir, "manager", "deployment.yaml"))

	opts.Image = ""
	second, err := manifest.WriteKustomize(opts)
	require.NoError(t, err)
	assert.NoFileExists(t, filepath.Join(opts.ConfigDir, "manager", "deployment.yaml"), "the Deployment went away")
	assert.FileExists(t, filepath.Join(opts.ConfigDir, "rbac", "role.yaml"), "opgen generate's files stay")

	opts.Image = options().Image
	third, err := manifest.WriteKustomize(opts)
	require.NoError(t, err)
	assert.Equal(t, first, third)
	assert.NotEqual(t, first, second)
	for _, p := range third {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, string(contents[p]), string(data), p)
	}
}

func TestServerAcceptsTheKustomizeLayout(t *testing.T) {
	t.Parallel()
	opts := options()
	opts.Namespace = env.Namespace(t)
	opts.ConfigDir = copyConfig(t)
	_, err := manifest.WriteKustomize(opts)
	require.NoError(t, err)
	cmd := exec.CommandContext(context.Background(), env.Binaries.Kubectl, "--kubeconfig", env.Kubeconfig,
		"apply", "--dry-run=server", "-k", filepath.Join(opts.ConfigDir, "default"))
	got, err := cmd.CombinedOutput()
	require.NoError(t, err, string(got))
	for _, want := range []string{
		"customresourcedefinition.apiextensions.k8s.io/widgets.testenv.opgen.dev created (server dry run)",
		"serviceaccount/widget-operator created (server dry run)",
		"rolebinding.rbac.authorization.k8s.io/widget-operator-leader-election created (server dry run)",
		"deployment.apps/widget-operator created (server dry run)",
	} {
		assert.Contains(t, string(got), want)
	}
}
