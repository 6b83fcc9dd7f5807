package manifest_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/internal/osenv"
	"github.com/opgen-sdk/opgen/pkg/manifest"
	"github.com/opgen-sdk/opgen/pkg/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var env = testenv.New(testenv.Options{})

func TestMain(m *testing.M) { env.Main(m) }

func options() manifest.Options {
	return manifest.Options{
		Name:      "widget-operator",
		Namespace: "widget-system",
		Image:     "example.com/widget-operator:v1",
		Labels:    map[string]string{"app.kubernetes.io/part-of": "widgets"},
		ConfigDir: "testdata/config",
	}
}

func TestBuildMatchesGolden(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]manifest.Options{
		"with-image":      options(),
		"without-image":   func() manifest.Options { o := options(); o.Image = ""; return o }(),
		"service-monitor": func() manifest.Options { o := options(); o.ServiceMonitor = true; return o }(),
		"member":          func() manifest.Options { o := options(); o.Member = true; return o }(),
		"insecure-metrics": func() manifest.Options {
			o := options()
			o.MetricsInsecure, o.ServiceMonitor = true, true
			return o
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := manifest.Build(opts)
			require.NoError(t, err)
			golden := filepath.Join("testdata", name+".yaml")
			if *update {
				require.NoError(t, os.WriteFile(golden, got, 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got), "run `go test ./pkg/manifest -update` if the change is intended")

			again, err := manifest.Build(opts)
			require.NoError(t, err)
			assert.Equal(t, got, again, "output must be deterministic")
		})
	}
}

func TestDeploymentIsHardened(t *testing.T) {
	t.Parallel()
	out, err := manifest.Build(options())
	require.NoError(t, err)
	docs := bytes.Split(out, []byte("\n---\n"))
	var dep appsv1.Deployment
	require.NoError(t, yaml.UnmarshalStrict(docs[len(docs)-1], &dep))
	require.Equal(t, "Deployment", dep.Kind)

	pod := dep.Spec.Template.Spec
	assert.Equal(t, "widget-operator", pod.ServiceAccountName)
	c := pod.Containers[0]
	sc := c.SecurityContext
	assert.True(t, *sc.RunAsNonRoot)
	assert.True(t, *sc.ReadOnlyRootFilesystem)
	assert.False(t, *sc.AllowPrivilegeEscalation)
	assert.Equal(t, "ALL", string(sc.Capabilities.Drop[0]))
	assert.Equal(t, "RuntimeDefault", string(sc.SeccompProfile.Type))
	assert.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path)
	assert.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
	assert.False(t, c.Resources.Limits.Memory().IsZero())
	assert.False(t, c.Resources.Requests.Cpu().IsZero())
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil {
			env[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	assert.Equal(t, map[string]string{osenv.WatchNamespace: "all", osenv.PodNamespace: "metadata.namespace"}, env)
}

func TestServerAcceptsTheManifest(t *testing.T) {
	t.Parallel()
	opts := options()
	// Namespaced objects of a server dry run need their namespace to exist
	// for real.
	opts.Namespace = env.Namespace(t)
	out, err := manifest.Build(opts)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	require.NoError(t, os.WriteFile(path, out, 0o600))
	// A server-side dry run checks every object against the real API
	// server's schemas and admission, and creates nothing.
	cmd := exec.CommandContext(context.Background(), env.Binaries.Kubectl, "--kubeconfig", env.Kubeconfig,
		"apply", "--dry-run=server", "-f", path)
	got, err := cmd.CombinedOutput()
	require.NoError(t, err, string(got))
	for _, want := range []string{
		"customresourcedefinition.apiextensions.k8s.io/widgets.testenv.opgen.dev created (server dry run)",
		"serviceaccount/widget-operator created (server dry run)",
		"clusterrole.rbac.authorization.k8s.io/widget-operator created (server dry run)",
		"deployment.apps/widget-operator created (server dry run)",
	} {
		assert.Contains(t, string(got), want)
	}
	_, err = env.Clientset().CoreV1().ServiceAccounts(opts.Namespace).Get(context.Background(), "widget-operator", metav1.GetOptions{})
	assert.Error(t, err, "a dry run must create nothing")
}

func TestBadInputSaysWhatToDo(t *testing.T) {
	t.Parallel()
	_, err := manifest.Build(manifest.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pass --name")
	assert.Contains(t, err.Error(), "pass --namespace")

	opts := options()
	opts.ConfigDir = t.TempDir()
	_, err = manifest.Build(opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "run `go generate ./...`")

	_, err = manifest.ParseLabels("a=b,broken")
	assert.ErrorContains(t, err, `label "broken" is not key=value`)
}

// deploymentOf builds opts and returns its Deployment and whether it has
// a PodDisruptionBudget.
func deploymentOf(t *testing.T, opts manifest.Options) (appsv1.Deployment, bool) {
	t.Helper()
	out, err := manifest.Build(opts)
	require.NoError(t, err)
	var dep appsv1.Deployment
	pdb := false
	for _, doc := range bytes.Split(out, []byte("\n---\n")) {
		var head struct{ Kind string }
		require.NoError(t, yaml.Unmarshal(doc, &head))
		switch head.Kind {
		case "Deployment":
			require.NoError(t, yaml.UnmarshalStrict(doc, &dep))
		case "PodDisruptionBudget":
			pdb = true
		}
	}
	return dep, pdb
}

// TestGracePeriodFollowsTheShutdownTimeout: the kubelet waits the shutdown
// timeout plus a margin before it kills the operator, so a shutdown with
// a stuck handler (30 s, then 2 s, then the servers) ends on its own.
func TestGracePeriodFollowsTheShutdownTimeout(t *testing.T) {
	t.Parallel()
	dep, _ := deploymentOf(t, options())
	assert.EqualValues(t, 45, *dep.Spec.Template.Spec.TerminationGracePeriodSeconds, "30 s, the runtime's default, and 15 s")
	assert.NotContains(t, dep.Spec.Template.Spec.Containers[0].Args, "--shutdown-timeout=30s", "the default is not passed")

	o := options()
	o.ShutdownTimeout = 2 * time.Minute
	dep, _ = deploymentOf(t, o)
	assert.EqualValues(t, 135, *dep.Spec.Template.Spec.TerminationGracePeriodSeconds)
	assert.Contains(t, dep.Spec.Template.Spec.Containers[0].Args, "--shutdown-timeout=120s")

	o.ShutdownTimeout = 1500 * time.Millisecond
	_, err := manifest.Build(o)
	assert.ErrorContains(t, err, "not a whole number of seconds")
}

// TestWebhooksDefaultToTwoReplicas: an operator that serves webhooks runs
// two replicas, which a PodDisruptionBudget keeps from being evicted
// together; replicas asked for are kept, and without webhooks it is one
// replica and no budget.
func TestWebhooksDefaultToTwoReplicas(t *testing.T) {
	t.Parallel()
	dep, pdb := deploymentOf(t, webhookOptions())
	assert.EqualValues(t, 2, *dep.Spec.Replicas)
	assert.True(t, pdb)

	o := webhookOptions()
	o.Replicas = 3
	dep, _ = deploymentOf(t, o)
	assert.EqualValues(t, 3, *dep.Spec.Replicas)

	dep, pdb = deploymentOf(t, options())
	assert.EqualValues(t, 1, *dep.Spec.Replicas)
	assert.False(t, pdb)
}

// TestShardingAndExtraArgs: Sharding passes --sharding and defaults to two
// replicas; ExtraArgs come last, so that one of a flag the manifest sets
// wins; neither sharding without election nor a bare word is written.
func TestShardingAndExtraArgs(t *testing.T) {
	t.Parallel()
	o := options()
	o.Sharding = true
	o.ExtraArgs = []string{"--workers=8", "--kube-api-qps=50"}
	dep, _ := deploymentOf(t, o)
	assert.EqualValues(t, 2, *dep.Spec.Replicas)
	args := dep.Spec.Template.Spec.Containers[0].Args
	require.GreaterOrEqual(t, len(args), 3)
	assert.Equal(t, []string{"--sharding", "--workers=8", "--kube-api-qps=50"}, args[len(args)-3:])

	o.Replicas = 4
	dep, _ = deploymentOf(t, o)
	assert.EqualValues(t, 4, *dep.Spec.Replicas)

	bad := options()
	bad.Sharding, bad.NoLeaderElection = true, true
	bad.ExtraArgs = []string{"workers=8"}
	_, err := manifest.Build(bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sharding needs leader election")
	assert.Contains(t, err.Error(), `the extra argument "workers=8" is not a flag`)
}

// TestShardingGrantsPatchOnTheControllersKinds: the leader labels the
// objects of the controllers' kinds with their buckets, so a sharded
// operator gets patch on each CRD kind its role watches and does not yet
// patch (hello-operator's Greetings), bound to its ServiceAccount; one
// that does not shard, or whose role patches them already, gets no role.
func TestShardingGrantsPatchOnTheControllersKinds(t *testing.T) {
	t.Parallel()
	o := manifest.Options{Name: "hello-operator", Namespace: "hello-system", ConfigDir: "../../examples/hello-operator/config"}
	roles := func(o manifest.Options) map[string][]rbacv1.PolicyRule {
		out, err := manifest.Build(o)
		require.NoError(t, err)
		found := map[string][]rbacv1.PolicyRule{}
		for _, doc := range bytes.Split(out, []byte("\n---\n")) {
			var obj struct {
				Kind     string
				Metadata struct{ Name string }
				Rules    []rbacv1.PolicyRule
				RoleRef  rbacv1.RoleRef `json:"roleRef"`
			}
			require.NoError(t, yaml.Unmarshal(doc, &obj))
			switch obj.Kind {
			case "ClusterRole":
				found[obj.Metadata.Name] = append(found[obj.Metadata.Name], obj.Rules...)
			case "ClusterRoleBinding":
				found["binding to "+obj.RoleRef.Name] = nil
			}
		}
		return found
	}
	plain := roles(o)
	assert.NotContains(t, plain, "hello-operator"+manifest.ShardingRoleSuffix)
	o.Sharding = true
	sharded := roles(o)
	assert.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{"hello.example.com"}, Resources: []string{"greetings"}, Verbs: []string{"patch"}}},
		sharded["hello-operator-sharding"])
	assert.Contains(t, sharded, "binding to hello-operator-sharding")

	w := options()
	w.Sharding = true
	assert.NotContains(t, roles(w), "widget-operator"+manifest.ShardingRoleSuffix, "the role patches widgets already")
}
