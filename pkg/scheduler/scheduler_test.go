package scheduler_test

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/scheduler"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
	"github.com/opgen-sdk/opgen/test/testkit"
)

// cheapest places pods on nodes labelled cheap=true; nodes of other tests
// (the cluster is shared) are skipped by their test label.
func cheapest(test string) scheduler.Func {
	return func(_ context.Context, _ *corev1.Pod, nodes iter.Seq[*corev1.Node]) (*corev1.Node, error) {
		for n := range nodes {
			if n.Labels["test"] == test && n.Labels["cheap"] == "true" {
				return n, nil
			}
		}
		return nil, fmt.Errorf("no cheap node: %w", scheduler.ErrUnschedulable)
	}
}

// TestBindsToCheapNodes: every Pod that names the scheduler lands on the
// one cheap node that Fits (the other cheap one is cordoned, a third is
// not cheap); a Scheduled event and the metric say so; a Pod for another
// scheduler is left alone.
func TestBindsToCheapNodes(t *testing.T) {
	t.Parallel()
	ns := podNamespace(t)
	createNode(t, ns+"-a-pricey", map[string]string{"test": ns}, true)
	createNode(t, ns+"-b-cheap-cordoned", map[string]string{"test": ns, "cheap": "true"}, true, func(n *corev1.Node) { n.Spec.Unschedulable = true })
	createNode(t, ns+"-c-cheap-notready", map[string]string{"test": ns, "cheap": "true"}, false)
	createNode(t, ns+"-d-cheap", map[string]string{"test": ns, "cheap": "true"}, true)
	op := newOperator(t, ns)
	name := "cheap-" + ns
	require.NoError(t, scheduler.Register(op, cheapest(ns), scheduler.Options{Name: name}))
	run(t, op)

	createPod(t, ns, "other", "someone-else")
	for i := range 4 {
		createPod(t, ns, fmt.Sprintf("p%d", i), name)
	}
	for i := range 4 {
		pod := fmt.Sprintf("p%d", i)
		eventually(t, pod+" bound", func() bool { return nodeOf(t, ns, pod) != "" })
		assert.Equal(t, ns+"-d-cheap", nodeOf(t, ns, pod))
	}
	assert.Empty(t, nodeOf(t, ns, "other"), "a Pod of another scheduler is not ours")
	eventually(t, "Scheduled events", func() bool { return countEvents(t, ns, scheduler.ReasonScheduled) == 4 })
	assert.Equal(t, 4.0, metric(t, op, "opgen_scheduler_bindings_total", "scheduler", name, "result", scheduler.ResultBound))
}

// TestUnschedulableIsReportedAndRetried: a Pod that fits nowhere gets
// FailedScheduling, a BindFailed event and the unschedulable metric, and
// is bound as soon as a node that fits appears.
func TestUnschedulableIsReportedAndRetried(t *testing.T) {
	t.Parallel()
	ns := podNamespace(t)
	createNode(t, ns+"-pricey", map[string]string{"test": ns}, true)
	op := newOperator(t, ns)
	name := "cheap-" + ns
	var unschedulable atomic.Int32
	telemetry.On(op.Telemetry(), func(e telemetry.BindFailed) {
		if e.Unschedulable && e.Pod.Name == "waiting" {
			unschedulable.Add(1)
		}
	})
	require.NoError(t, scheduler.Register(op, cheapest(ns), scheduler.Options{Name: name, MaxBackoff: 5 * 60e9}))
	run(t, op)

	createPod(t, ns, "waiting", name)
	eventually(t, "FailedScheduling", func() bool { return countEvents(t, ns, scheduler.ReasonFailedScheduling) > 0 })
	assert.Positive(t, unschedulable.Load())
	assert.Positive(t, metric(t, op, "opgen_scheduler_bindings_total", "scheduler", name, "result", scheduler.ResultUnschedulable))
	assert.Empty(t, nodeOf(t, ns, "waiting"))
	events, err := env.Clientset().EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.True(t, hasNote(events.Items, scheduler.ReasonFailedScheduling, "no cheap node"), "the event says why")

	createNode(t, ns+"-cheap", map[string]string{"test": ns, "cheap": "true"}, true)
	eventually(t, "the Pod bound once a cheap node exists", func() bool { return nodeOf(t, ns, "waiting") == ns+"-cheap" })
}

// TestPausedPodIsNotScheduled: the pause annotation holds a Pod back
// until it goes.
func TestPausedPodIsNotScheduled(t *testing.T) {
	t.Parallel()
	ns := podNamespace(t)
	createNode(t, ns+"-cheap", map[string]string{"test": ns, "cheap": "true"}, true)
	op := newOperator(t, ns)
	name := "cheap-" + ns
	paused := make(chan struct{}, 10)
	telemetry.On(op.Telemetry(), func(telemetry.ReconcilePaused) { paused <- struct{}{} })
	require.NoError(t, scheduler.Register(op, cheapest(ns), scheduler.Options{Name: name}))
	run(t, op)

	no := false
	_, err := env.Clientset().CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "held", Annotations: map[string]string{runtime.PauseAnnotation: "true"}},
		Spec: corev1.PodSpec{SchedulerName: name, AutomountServiceAccountToken: &no,
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	<-paused
	assert.Empty(t, nodeOf(t, ns, "held"))
	_, err = env.Clientset().CoreV1().Pods(ns).Patch(context.Background(), "held", "application/merge-patch+json",
		[]byte(`{"metadata":{"annotations":{"opgen.dev/paused":null}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	eventually(t, "the Pod bound after unpausing", func() bool { return nodeOf(t, ns, "held") == ns+"-cheap" })
}

func TestOptionsAreChecked(t *testing.T) {
	op, err := runtime.New(env.Config, runtime.Options{Name: "x", LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
	require.NoError(t, err)
	require.ErrorContains(t, scheduler.Register(op, cheapest("x"), scheduler.Options{}), "Options.Name")
	require.ErrorContains(t, scheduler.Register(op, cheapest("x"), scheduler.Options{Name: "s", InitialBackoff: 2e9, MaxBackoff: 1e9}), "MaxBackoff")
	require.ErrorContains(t, scheduler.Register(op, nil, scheduler.Options{Name: "s"}), "nil")
}

func countEvents(t testing.TB, ns, reason string) int {
	t.Helper()
	list, err := env.Clientset().EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	n := 0
	for _, e := range list.Items {
		if e.Reason == reason {
			n++
		}
	}
	return n
}

func hasNote(events []eventsv1.Event, reason, note string) bool {
	for _, e := range events {
		if e.Reason == reason && strings.Contains(e.Note, note) {
			return true
		}
	}
	return false
}

func metric(t testing.TB, op *runtime.Operator, name string, labels ...string) float64 {
	t.Helper()
	return testkit.Metric(t, op, name, labels...)
}
