package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/pkg/testenv"
)

// TestReleaseLive runs opgen release --live as a user would, on the
// compatibility gate's fixture that adds a name rule (namesOwned),
// against a cluster of the last release that holds a Widget whose name
// the rule refuses: the release fails and writes nothing, naming the
// object. It builds the preflight command (once per cache) and starts two
// control planes, the cluster and the preflight's scratch server.
func TestReleaseLive(t *testing.T) {
	ctx := context.Background()
	cluster := testenv.New(testenv.Options{Private: true})
	require.NoError(t, cluster.Start(ctx))
	t.Cleanup(cluster.Stop)
	fixture := "../../gen/compat/testdata/name-rule-added"
	data, err := os.ReadFile(filepath.Join(fixture, "config/released/compat.example.com_widgets.yaml"))
	require.NoError(t, err)
	released := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, yaml.Unmarshal(data, released))
	require.NoError(t, cluster.ApplyCRDs(ctx, released))
	dyn, err := dynamic.NewForConfig(cluster.Config)
	require.NoError(t, err)
	widgets := dyn.Resource(schema.GroupVersionResource{Group: "compat.example.com", Version: "v1", Resource: "widgets"}).Namespace("default")
	for _, name := range []string{"web", "9-lives"} {
		_, err := widgets.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "compat.example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"size": int64(1)},
		}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, cluster.WriteKubeconfig(cluster.Config, kubeconfig))

	allowed := "../../gen/compat/testdata/name-rule-added-allowed"
	before, err := os.ReadFile(filepath.Join(allowed, "config/released/compat.example.com_widgets.yaml"))
	require.NoError(t, err)
	cmd := newReleaseCommand()
	var stdout, stderr bytes.Buffer
	cmd.SetArgs([]string{"-C", allowed, "--name", "fixture", "--live", "--kubeconfig", kubeconfig, "./apis/..."})
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err = cmd.ExecuteContext(ctx)
	t.Logf("stderr:\n%s", stderr.String())
	require.Error(t, err, "stdout:\n%s", stdout.String())
	assert.Contains(t, err.Error(), "the cluster holds objects that the new CRDs refuse")
	assert.Contains(t, stdout.String(), "widgets.compat.example.com v1: 2 object(s) checked, 1 refused, 0 kept writable by ratcheting")
	assert.Contains(t, stdout.String(), "refused: default/9-lives: every update fails")
	after, err := os.ReadFile(filepath.Join(allowed, "config/released/compat.example.com_widgets.yaml"))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "nothing was written")
}
