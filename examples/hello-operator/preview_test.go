package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/optest"
)

// TestPreviewOfTheConvergedExample runs hello-operator's binary with
// --preview, as its ServiceAccount, over 200 converged Greetings: it
// reports nothing, exits 0, and no Greeting, Deployment or Service was
// written.
func TestPreviewOfTheConvergedExample(t *testing.T) {
	t.Parallel()
	if kit.Env == nil {
		t.Skip("runs the operator's binary against the local control plane: run without " + optest.ExistingClusterEnv)
	}
	const n = 200
	ns := kit.Namespace(t)
	for i := range n {
		createGreeting(t, ns, fmt.Sprintf("g-%03d", i), "Hello")
	}
	optest.Eventually(t, "every Greeting ready", func(ctx context.Context) (bool, error) {
		l, err := hello.HelloV1().Greetings(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := 0
		for i := range l.Items {
			if g := &l.Items[i]; apis.IsTrue(g, apis.Ready) && g.Status.ObservedGeneration == g.Generation {
				ready++
			}
		}
		optest.Saw(ctx, fmt.Sprintf("%d of %d ready", ready, n))
		return ready == n, nil
	}, optest.Within(5*time.Minute))
	written := func() map[string]string {
		out := map[string]string{}
		ctx := context.Background()
		gs, err := hello.HelloV1().Greetings(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, g := range gs.Items {
			out["greeting/"+g.Name] = g.ResourceVersion
		}
		svcs, err := kit.Clientset.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, s := range svcs.Items {
			out["service/"+s.Name] = s.ResourceVersion
		}
		deps, err := kit.Clientset.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, d := range deps.Items {
			out["deployment/"+d.Name] = fmt.Sprint("generation ", d.Generation) // its status is the controllers'
		}
		return out
	}
	before, since := written(), time.Now()
	optest.Eventually(t, "the operator and the controllers to be done", func(context.Context) (bool, error) {
		if now := written(); !assert.ObjectsAreEqual(before, now) {
			before, since = now, time.Now()
		}
		return time.Since(since) > 2*time.Second, nil
	}, optest.Within(2*time.Minute), optest.Every(250*time.Millisecond))

	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	require.NoError(t, kit.Env.WriteKubeconfig(kit.Operator.Config, kubeconfig), "the operator's ServiceAccount")
	bin := buildOperator(t, ".")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "--preview", "--preview-format=json", "--kubeconfig="+kubeconfig)
	cmd.Env = append(os.Environ(), "OPGEN_WATCH_NAMESPACE="+ns)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("the preview of %d Greetings took %s (the process, from its start to its exit)", n, time.Since(start))
	require.NoError(t, err, "exits 0 when nothing would change; its log:\n%s\nits report:\n%s", stderr.String(), stdout.String())
	var report struct {
		Objects []any `json:"objects"`
		Events  []any `json:"events"`
		Summary struct {
			Text string `json:"text"`
		} `json:"summary"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &report), stdout.String())
	assert.Empty(t, report.Objects)
	assert.Empty(t, report.Events)
	assert.Equal(t, "0 objects would change, 0 writes, 0 events", report.Summary.Text)
	assert.Equal(t, before, written(), "the preview wrote nothing")
}
