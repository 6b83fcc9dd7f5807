package scheduler_test

import (
	"context"
	"fmt"
	"iter"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/scheduler"
)

// A scheduler that places Pods on nodes labelled cheap=true.
func ExampleRegister() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ns := "default"
	op, err := runtime.New(env.Config, runtime.Options{
		Name: "cheap-scheduler", Namespaces: []string{ns}, MetricsAddr: "0", HealthAddr: "0",
		LeaderElection: runtime.LeaderElectionOptions{Namespace: ns},
	})
	if err != nil {
		panic(err)
	}
	cheap := scheduler.Func(func(_ context.Context, _ *corev1.Pod, nodes iter.Seq[*corev1.Node]) (*corev1.Node, error) {
		for n := range nodes { // only nodes that Fit: schedulable, Ready, taints tolerated
			if n.Labels["cheap"] == "true" && n.Labels["example"] == "register" {
				return n, nil
			}
		}
		return nil, nil // none fits: FailedScheduling, tried again with backoff
	})
	if err := scheduler.Register(op, cheap, scheduler.Options{Name: "cheap-scheduler"}); err != nil {
		panic(err)
	}
	done := make(chan error)
	go func() { done <- op.Run(ctx) }()

	exampleNode(ctx, "example-cheap", map[string]string{"cheap": "true", "example": "register"})
	exampleNode(ctx, "example-pricey", map[string]string{"example": "register"})
	pods := env.Clientset().CoreV1().Pods(ns)
	_, _ = env.Clientset().CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	_, err = pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "thrifty"},
		Spec: corev1.PodSpec{SchedulerName: "cheap-scheduler",
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		panic(err)
	}
	var node string
	_ = wait.PollUntilContextTimeout(ctx, 20e6, 30e9, true, func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, "thrifty", metav1.GetOptions{})
		node = p.Spec.NodeName
		return err == nil && node != "", nil
	})
	fmt.Println("thrifty runs on", node)
	stop()
	<-done
	// Output: thrifty runs on example-cheap
}

// exampleNode creates a Ready node without the not-ready taint (no kubelet
// or node controller runs in the test control plane).
func exampleNode(ctx context.Context, name string, labels map[string]string) {
	nodes := env.Clientset().CoreV1().Nodes()
	n, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if err != nil {
		panic(err)
	}
	n.Spec.Taints = nil
	if n, err = nodes.Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		panic(err)
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "Example"}}
	if _, err := nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		panic(err)
	}
}
