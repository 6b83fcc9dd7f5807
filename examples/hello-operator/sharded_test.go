package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/opgen-sdk/opgen/pkg/manifest"
	"github.com/opgen-sdk/opgen/pkg/optest"
)

// TestShardedDeploymentRunsTwoReplicas renders the manifest with sharding
// on, as `opgen manifests --sharding` does, in a namespace of its own,
// installs it on the control plane, and runs its Deployment as a kubelet
// would: one process of the operator's binary per replica the Deployment
// asks for, with the container's arguments and environment, as the
// Deployment's ServiceAccount. Two things change, because the control
// plane and the host are shared: the cluster-wide roles and bindings get
// the namespace as a prefix (the package's own operator holds their
// names), and the bind addresses are off (two Pods' ports would be
// apart). Both replicas join, each takes a share of the hash space, and
// together they handle every Greeting.
func TestShardedDeploymentRunsTwoReplicas(t *testing.T) {
	t.Parallel()
	if kit.Env == nil {
		t.Skip("runs the operator's binary against the local control plane: run without " + optest.ExistingClusterEnv)
	}
	ctx := context.Background()
	ns := kit.Namespace(t)
	data, err := manifest.Build(manifest.Options{Name: "hello-operator", Namespace: ns, ConfigDir: "config", Image: "hello-operator:test",
		Sharding: true, WatchNamespace: ns, LogFormat: "json", Verbosity: 1})
	require.NoError(t, err)
	data, clusterWide := prefixClusterRBAC(t, data, ns+"-")
	t.Cleanup(func() { deleteClusterRBAC(clusterWide) })
	require.NoError(t, optest.Apply(ctx, kit.Config, data))

	dep, err := kit.Clientset.AppsV1().Deployments(ns).Get(ctx, "hello-operator", metav1.GetOptions{})
	require.NoError(t, err, "the manifest's Deployment, as the API server stored it")
	require.NotNil(t, dep.Spec.Replicas)
	require.EqualValues(t, 2, *dep.Spec.Replicas, "sharding runs two replicas by default")
	container := dep.Spec.Template.Spec.Containers[0]
	require.Contains(t, container.Args, "--sharding")

	bin := buildOperator(t, ".")
	cfg, err := kit.Env.ServiceAccountConfig(ctx, ns, dep.Spec.Template.Spec.ServiceAccountName)
	require.NoError(t, err)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, kit.Env.WriteKubeconfig(cfg, kubeconfig))
	args := append(podArgs(container.Args), "--kubeconfig", kubeconfig)
	env := append(os.Environ(), podEnv(t, container, ns)...)
	replicas := make([]*runningOperator, *dep.Spec.Replicas)
	for i := range replicas {
		replicas[i] = startProcess(t, fmt.Sprintf("replica %d", i), bin, args, env)
	}

	// Both members hold buckets (their Leases say which) before the
	// Greetings come, so that neither handles all of them for a moment.
	optest.Eventually(t, "two member Leases that each hold buckets", func(ctx context.Context) (bool, error) {
		leases, err := kit.Clientset.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		holding := 0
		for _, l := range leases.Items {
			if strings.Contains(l.Name, "-member-") && l.Annotations["shard.opgen.dev/held"] != "" {
				holding++
			}
		}
		for _, r := range replicas {
			if err := r.exited(); err != nil {
				return false, err
			}
		}
		return holding == len(replicas), nil
	})
	var names []string
	for i := range 20 {
		names = append(names, fmt.Sprintf("g%02d", i))
		createGreeting(t, ns, names[i], "Hello from a share")
	}
	handledBy := make([][]string, len(replicas))
	optest.Eventually(t, "every Greeting handled by one of the replicas", func(context.Context) (bool, error) {
		all := map[string]bool{}
		for i, r := range replicas {
			handledBy[i] = handled(r.log.String(), ns)
			for _, n := range handledBy[i] {
				all[n] = true
			}
		}
		return len(all) == len(names), nil
	})
	for i, r := range replicas {
		t.Logf("%s handled %d of %d Greetings: %v", r.name, len(handledBy[i]), len(names), handledBy[i])
		assert.NotEmpty(t, handledBy[i], "%s handled no Greeting: its share is empty", r.name)
	}
	for _, r := range replicas {
		require.NoError(t, r.stop(), "%s exits cleanly on SIGTERM; its log:\n%s", r.name, r.log.String())
	}
}

// podArgs are a container's arguments with the bind addresses of its
// ports replaced by "0" (off): the processes of the test share one host.
func podArgs(args []string) []string {
	var out []string
	for _, a := range args {
		flag, _, _ := strings.Cut(a, "=")
		if strings.HasSuffix(flag, "-bind-address") {
			a = flag + "=0"
		}
		out = append(out, a)
	}
	return out
}

// podEnv is a container's environment as the kubelet gives it to a Pod in
// ns: values as they are, metadata.namespace from the Pod.
func podEnv(t *testing.T, c corev1.Container, ns string) []string {
	t.Helper()
	var env []string
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env = append(env, e.Name+"="+ns)
		default:
			t.Fatalf("the container's %s comes from a source this test does not resolve: %+v", e.Name, e.ValueFrom)
		}
	}
	return env
}

// startProcess runs bin with args and env until the test ends.
func startProcess(t *testing.T, name, bin string, args, env []string) *runningOperator {
	t.Helper()
	op := &runningOperator{name: name, log: &syncBuffer{}, done: make(chan error, 1)}
	op.cmd = exec.Command(bin, args...)
	op.cmd.Env = env
	op.cmd.Stdout, op.cmd.Stderr = op.log, op.log
	op.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, op.cmd.Start())
	go func() { op.done <- op.cmd.Wait() }()
	t.Cleanup(func() {
		_ = op.cmd.Process.Kill()
		<-op.done
		if t.Failed() {
			t.Logf("%s's log:\n%s", op.name, op.log.String())
		}
	})
	return op
}

// handled returns the names of the objects of ns that a JSON log's
// "handled" lines name, each once, in order.
func handled(log, ns string) []string {
	var names []string
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct{ Msg, Namespace, Name string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "handled" && line.Namespace == ns && !slices.Contains(names, line.Name) {
			names = append(names, line.Name)
		}
	}
	return names
}

// prefixClusterRBAC puts prefix before the names of the manifest's
// ClusterRoles and ClusterRoleBindings, and before the role names the
// bindings refer to. It returns the manifest and the kinds and names it
// renamed.
func prefixClusterRBAC(t *testing.T, manifestYAML []byte, prefix string) ([]byte, [][2]string) {
	t.Helper()
	var docs [][]byte
	var renamed [][2]string
	for _, doc := range bytes.Split(manifestYAML, []byte("\n---\n")) {
		var obj map[string]any
		require.NoError(t, yaml.Unmarshal(doc, &obj))
		kind, _ := obj["kind"].(string)
		if kind == "ClusterRole" || kind == "ClusterRoleBinding" {
			meta := obj["metadata"].(map[string]any)
			meta["name"] = prefix + meta["name"].(string)
			renamed = append(renamed, [2]string{kind, meta["name"].(string)})
			if ref, ok := obj["roleRef"].(map[string]any); ok {
				ref["name"] = prefix + ref["name"].(string)
			}
			var err error
			doc, err = yaml.Marshal(obj)
			require.NoError(t, err)
		}
		docs = append(docs, doc)
	}
	return bytes.Join(docs, []byte("\n---\n")), renamed
}

// deleteClusterRBAC deletes the cluster-wide roles and bindings the test
// made; its namespace goes with the test.
func deleteClusterRBAC(objects [][2]string) {
	ctx := context.Background()
	rbac := kit.Clientset.RbacV1()
	for _, o := range objects {
		if o[0] == "ClusterRole" {
			_ = rbac.ClusterRoles().Delete(ctx, o[1], metav1.DeleteOptions{})
		} else {
			_ = rbac.ClusterRoleBindings().Delete(ctx, o[1], metav1.DeleteOptions{})
		}
	}
}
