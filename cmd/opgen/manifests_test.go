package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

const manifestConfig = "../../pkg/manifest/testdata/config"

func runManifests(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newManifestsCommand()
	var out bytes.Buffer
	cmd.SetArgs(append([]string{"--name", "widget-operator", "--config-dir", manifestConfig}, args...))
	cmd.SetOut(&out)
	cmd.SetErr(&bytes.Buffer{})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// documents returns the flat manifest's documents by kind (the last of each).
func documents(t *testing.T, manifest string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, doc := range bytes.Split([]byte(manifest), []byte("\n---\n")) {
		var head struct{ Kind string }
		require.NoError(t, yaml.Unmarshal(doc, &head))
		out[head.Kind] = doc
	}
	return out
}

func TestManifestsFlagsShapeTheDeployment(t *testing.T) {
	t.Parallel()
	out, err := runManifests(t, "--image", "widget:v1", "--replicas", "3", "--service-account", "runner",
		"--cpu-request", "50m", "--memory-limit", "1Gi", "--leader-elect=false", "--log-format", "json", "--verbosity", "2")
	require.NoError(t, err)
	docs := documents(t, out)

	var dep appsv1.Deployment
	require.NoError(t, yaml.UnmarshalStrict(docs["Deployment"], &dep))
	assert.Equal(t, int32(3), *dep.Spec.Replicas)
	pod := dep.Spec.Template.Spec
	assert.Equal(t, "runner", pod.ServiceAccountName)
	res := pod.Containers[0].Resources
	assert.Equal(t, "50m", res.Requests.Cpu().String())
	assert.Equal(t, "64Mi", res.Requests.Memory().String(), "an unset request keeps its default")
	assert.Equal(t, "500m", res.Limits.Cpu().String(), "an unset limit keeps its default")
	assert.Equal(t, "1Gi", res.Limits.Memory().String())
	assert.Equal(t, []string{"--metrics-bind-address=:8443", "--metrics-secure=true", "--health-probe-bind-address=:8081",
		"--leader-elect=false", "--log-format=json", "-v=2"}, pod.Containers[0].Args)

	var sa corev1.ServiceAccount
	require.NoError(t, yaml.UnmarshalStrict(docs["ServiceAccount"], &sa))
	assert.Equal(t, "runner", sa.Name)
	var binding rbacv1.ClusterRoleBinding
	require.NoError(t, yaml.UnmarshalStrict(docs["ClusterRoleBinding"], &binding))
	assert.Equal(t, "runner", binding.Subjects[0].Name, "the binding names the account the pod runs as")
}

func TestManifestsDefaults(t *testing.T) {
	t.Parallel()
	out, err := runManifests(t, "--image", "widget:v1")
	require.NoError(t, err)
	var dep appsv1.Deployment
	require.NoError(t, yaml.UnmarshalStrict(documents(t, out)["Deployment"], &dep))
	assert.Equal(t, int32(1), *dep.Spec.Replicas)
	assert.Equal(t, "widget-operator", dep.Spec.Template.Spec.ServiceAccountName)
	assert.Equal(t, "widget-operator-system", dep.Namespace)
	assert.Equal(t, []string{"--metrics-bind-address=:8443", "--metrics-secure=true", "--health-probe-bind-address=:8081"}, dep.Spec.Template.Spec.Containers[0].Args)
}

// TestManifestsMetricsFlags: --metrics-secure=false writes plain metrics
// without their RBAC; --service-monitor adds a ServiceMonitor.
func TestManifestsMetricsFlags(t *testing.T) {
	t.Parallel()
	out, err := runManifests(t, "--image", "widget:v1", "--service-monitor")
	require.NoError(t, err)
	assert.Contains(t, documents(t, out), "ServiceMonitor")
	assert.Contains(t, out, "name: widget-operator-metrics-auth")

	out, err = runManifests(t, "--image", "widget:v1", "--metrics-secure=false")
	require.NoError(t, err)
	assert.NotContains(t, documents(t, out), "ServiceMonitor")
	assert.NotContains(t, out, "metrics-auth")
	assert.NotContains(t, out, "metrics-reader")
	assert.Contains(t, out, "--metrics-secure=false")
}

func TestManifestsBadFlagsSayWhatToDo(t *testing.T) {
	t.Parallel()
	_, err := runManifests(t, "--cpu-limit", "lots")
	assert.ErrorContains(t, err, `--cpu-limit "lots"`)
	assert.ErrorContains(t, err, "write a quantity such as 100m")
	_, err = runManifests(t, "--log-format", "xml")
	assert.ErrorContains(t, err, "pass --log-format text or json")
	_, err = runManifests(t, "--format", "zip")
	assert.ErrorContains(t, err, "use flat, kustomize or helm")
	_, err = runManifests(t, "--format", "kustomize", "--out", "x")
	assert.ErrorContains(t, err, "leave --out out")
}

func TestManifestsKustomizeWritesTheLayout(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "config")
	require.NoError(t, os.CopyFS(dir, os.DirFS(manifestConfig)))
	cmd := newManifestsCommand()
	var out bytes.Buffer
	cmd.SetArgs([]string{"--name", "widget-operator", "--config-dir", dir, "--format", "kustomize", "--image", "widget:v1"})
	cmd.SetOut(&out)
	require.NoError(t, cmd.ExecuteContext(context.Background()))
	for _, p := range []string{"default", "manager", "rbac", "crd"} {
		assert.FileExists(t, filepath.Join(dir, p, "kustomization.yaml"))
		assert.Contains(t, out.String(), filepath.Join(dir, p, "kustomization.yaml"))
	}
}

func TestManifestsHelmWritesTheChart(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "chart")
	out, err := runManifests(t, "--format", "helm", "--out", dir, "--image", "widget:v1", "--replicas", "2", "--service-account", "runner")
	require.NoError(t, err)
	assert.Contains(t, out, filepath.Join(dir, "Chart.yaml"))
	values, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	require.NoError(t, err)
	var v struct {
		Image          string
		Replicas       int
		ServiceAccount struct{ Name string } `json:"serviceAccount"`
	}
	require.NoError(t, yaml.Unmarshal(values, &v))
	assert.Equal(t, "widget:v1", v.Image)
	assert.Equal(t, 2, v.Replicas)
	assert.Equal(t, "runner", v.ServiceAccount.Name)
	assert.FileExists(t, filepath.Join(dir, "templates", "deployment.yaml"))
}
