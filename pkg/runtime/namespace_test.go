package runtime_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// TestBonnyAllNamespaces: Bonny's __ALL__ means every namespace, in the
// environment and in Options.Namespaces, as "all" does.
func TestBonnyAllNamespaces(t *testing.T) {
	t.Setenv(runtime.EnvWatchNamespace, "__ALL__")
	op, err := runtime.New(&rest.Config{Host: "https://127.0.0.1:1"}, runtime.Options{Name: "ns-test", LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
	require.NoError(t, err)
	assert.Equal(t, []string{runtime.AllNamespaces}, op.Options().Namespaces)
	t.Setenv(runtime.EnvWatchNamespace, "")
	op, err = runtime.New(&rest.Config{Host: "https://127.0.0.1:1"}, runtime.Options{Name: "ns-test", Namespaces: []string{"__ALL__"}, LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
	require.NoError(t, err)
	assert.Equal(t, []string{runtime.AllNamespaces}, op.Options().Namespaces)
}

// TestLocalLeaseNamespaceFromKubeconfig: without a pod namespace, a local
// run's Lease lives in the current kubeconfig context's namespace, and New
// logs that; without a kubeconfig it still fails, saying what to set.
func TestLocalLeaseNamespaceFromKubeconfig(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "config")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {}}]
contexts: [{name: dev, context: {cluster: c, user: u, namespace: team-a}}]
current-context: dev
`), 0o600))
	t.Setenv("KUBECONFIG", kubeconfig)
	t.Setenv(runtime.EnvPodNamespace, "")
	var buf bytes.Buffer
	log := funcr.New(func(_, args string) { buf.WriteString(args + "\n") }, funcr.Options{})
	op, err := runtime.New(&rest.Config{Host: "https://127.0.0.1:1"}, runtime.Options{Name: "ns-test", Logger: log})
	require.NoError(t, err)
	assert.Equal(t, "team-a", op.Options().LeaderElection.Namespace)
	assert.Contains(t, buf.String(), `"namespace"="team-a"`)
	assert.Contains(t, buf.String(), "kubeconfig's current namespace")

	t.Setenv("KUBECONFIG", filepath.Join(dir, "missing"))
	_, err = runtime.New(&rest.Config{Host: "https://127.0.0.1:1"}, runtime.Options{Name: "ns-test", Logger: log})
	require.ErrorContains(t, err, runtime.EnvPodNamespace)
}
