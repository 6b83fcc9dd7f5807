package builtin_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/runtime/builtin"
)

// A pod printer: a typed controller for a built-in kind, registered like
// one for a custom kind. Status changes wake it too (Reconcile).
func ExamplePods() {
	ns, _ := env.Clientset().CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}, metav1.CreateOptions{})
	op, err := runtime.New(env.Config, runtime.Options{
		Name: "pod-printer", Namespaces: []string{ns.Name}, MetricsAddr: "0", HealthAddr: "0",
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true},
	})
	if err != nil {
		panic(err)
	}
	printed := make(chan string, 10)
	print := func(_ context.Context, a *plug.Action[*corev1.Pod]) error {
		printed <- fmt.Sprintf("%s %s %s", a.Verb, a.Object.Name, a.Object.Status.Phase)
		return nil
	}
	_, err = runtime.Register(op, builtin.Pods(op, builtin.Options{}),
		plug.Handler[*corev1.Pod](plug.HandlerFuncs[*corev1.Pod]{OnAdd: print, OnModify: print, OnReconcile: print}),
		runtime.ControllerOptions[*corev1.Pod]{Name: "pod-printer"})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- op.Run(ctx) }()

	pods := env.Clientset().CoreV1().Pods(ns.Name)
	_, _ = env.Clientset().CoreV1().ServiceAccounts(ns.Name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	pod, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(<-printed)
	pod.Status.Phase = corev1.PodRunning
	_, _ = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	fmt.Println(<-printed)
	stop()
	fmt.Println("Run:", <-done)
	// Output:
	// Add web Pending
	// Reconcile web Running
	// Run: <nil>
}
