package external_test

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/opgen-sdk/opgen/pkg/external"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// A Reconciler keeps one record of an external system (here a small HTTP
// server) per object: New adapts it to the runtime, whose finalizer makes
// sure the record is deleted before the object goes.
func ExampleNew() {
	srv := newRecordServer() // the external system
	defer srv.Close()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ns, _ := env.Clientset().CoreV1().Namespaces().Create(ctx, namespace("example-"), metav1.CreateOptions{})

	op, err := runtime.New(env.Config, runtime.Options{
		Name: "records-operator", Namespaces: []string{ns.Name}, MetricsAddr: "0", HealthAddr: "0",
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true},
	})
	if err != nil {
		panic(err)
	}
	kind, _ := testapi.KindFor(op) // generated glue builds the Kind
	h := external.New[*testapi.Gadget](records{server: srv})
	if _, err := runtime.Register(op, kind, plug.Handler[*testapi.Gadget](h), runtime.ControllerOptions[*testapi.Gadget]{}); err != nil {
		panic(err)
	}
	done := make(chan error)
	go func() { done <- op.Run(ctx) }()

	c, _ := testapi.NewForConfigAndClient(env.Config, op.HTTPClient())
	gadgets := c.Gadgets(ns.Name)
	_, _ = gadgets.Create(ctx, &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g"}, Spec: testapi.GadgetSpec{Message: "hello"}}, metav1.CreateOptions{})
	poll(ctx, func() bool { _, ok := srv.get(ns.Name + "/g"); return ok })
	rec, _ := srv.get(ns.Name + "/g")
	fmt.Println("created:", rec.Message)

	_ = gadgets.Delete(ctx, "g", metav1.DeleteOptions{})
	poll(ctx, func() bool { _, ok := srv.get(ns.Name + "/g"); return !ok })
	fmt.Println("deleted with the object")
	stop()
	<-done
	// Output:
	// created: hello
	// deleted with the object
}

func poll(ctx context.Context, cond func() bool) {
	_ = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
}
