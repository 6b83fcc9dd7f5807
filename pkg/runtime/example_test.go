package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
	"github.com/opgen-sdk/opgen/pkg/telemetry"
	"github.com/opgen-sdk/opgen/test/testkit/testapi"
)

// greeter is a typed handler with Reconcile alone: it owns one ConfigMap
// per Gadget and reports a phase in the status, for every verb but Delete
// (a.Verb says which). The default pipeline writes both.
type greeter struct{ added chan string }

func (g greeter) Reconcile(_ context.Context, a *plug.Action[*testapi.Gadget]) error {
	if a.Verb == plug.Add {
		g.added <- a.Object.Name
	}
	a.Own(corev1ac.ConfigMap(a.Object.Name, "").WithData(map[string]string{"greeting": a.Object.Spec.Message}))
	a.Object.Status.Phase = "Ready"
	return nil
}

// Register a typed handler for a kind and run the operator. cfg comes from
// runtime.LoadConfig in a real main; here it is the test control plane's.
func ExampleRegister() {
	cfg := env.Config
	ns := exampleNamespace()

	op, err := runtime.New(cfg, runtime.Options{
		Name:           "greeter-operator",
		Namespaces:     []string{ns},
		LeaderElection: runtime.LeaderElectionOptions{Namespace: ns},
		MetricsAddr:    "0", HealthAddr: "0",
	})
	if err != nil {
		panic(err)
	}
	kind, _ := testapi.KindFor(op) // generated glue builds the Kind
	h := greeter{added: make(chan string, 1)}
	_, err = runtime.Register(op, kind, plug.Handler[*testapi.Gadget](h), runtime.ControllerOptions[*testapi.Gadget]{
		Owns: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")},
	})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- op.Run(ctx) }()

	c, _ := testapi.NewForConfigAndClient(cfg, op.HTTPClient())
	_, _ = c.Gadgets(ns).Create(ctx, &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: "hello"}, Spec: testapi.GadgetSpec{Message: "hi"}}, metav1.CreateOptions{})
	fmt.Println("Add", <-h.added)
	_ = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		cm, err := op.Clientset().CoreV1().ConfigMaps(ns).Get(ctx, "hello", metav1.GetOptions{})
		return err == nil && cm.Data["greeting"] == "hi", nil
	})
	fmt.Println("owned ConfigMap applied")

	stop()
	fmt.Println("Run:", <-done)
	// Output:
	// Add hello
	// owned ConfigMap applied
	// Run: <nil>
}

func exampleNamespace() string {
	ns, err := env.Clientset().CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}, metav1.CreateOptions{})
	if err != nil {
		panic(err)
	}
	return ns.Name
}

// Options come from code, flags and the environment, in that order of
// precedence: a flag given on the command line wins.
func ExampleOptions_BindFlags() {
	opts := runtime.Options{Name: "hello-operator", Workers: 4}
	fs := flag.NewFlagSet("hello-operator", flag.ContinueOnError)
	opts.BindFlags(fs)
	_ = fs.Parse([]string{"--watch-namespace=team-a,team-b", "--leader-elect=false", "--metrics-bind-address=0"})
	fmt.Println(opts.Namespaces, opts.LeaderElection.Disabled, opts.MetricsAddr, opts.Workers)
	// Output: [team-a team-b] true 0 4
}

// Main is an operator's whole main function.
func ExampleMain() {
	setup := func(op *runtime.Operator) error {
		// generated: controller.Setup(op) calls runtime.Register per kind
		return nil
	}
	if false { // it runs until SIGTERM
		runtime.Main(runtime.Options{Name: "hello-operator"}, setup)
	}
}

// Pause reconciliation of one object with an annotation; every controller
// honours it.
func ExampleIsPaused() {
	g := &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g", Annotations: map[string]string{runtime.PauseAnnotation: "true"}}}
	fmt.Println(runtime.IsPaused(g))
	delete(g.Annotations, runtime.PauseAnnotation)
	fmt.Println(runtime.IsPaused(g))
	// Output:
	// true
	// false
}

// Work that runs only on the leader, beside the controllers, such as a
// cache warmer or a reporter; package task builds periodic tasks on it.
func ExampleOperator_AddLeaderRunnable() {
	op, err := runtime.New(env.Config, runtime.Options{Name: "reporter", LeaderElection: runtime.LeaderElectionOptions{Disabled: true}})
	if err != nil {
		panic(err)
	}
	err = op.AddLeaderRunnable(runtime.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done() // leadership ended or the operator shuts down
		return nil
	}))
	fmt.Println(err)
	// Output: <nil>
}

// Subscribe to the operator's telemetry: the same events feed its
// metrics and logs. With a TracerProvider, each action is also a span.
func ExampleOperator_Telemetry() {
	op, err := runtime.New(env.Config, runtime.Options{
		Name:           "observed",
		LeaderElection: runtime.LeaderElectionOptions{Disabled: true},
		// TracerProvider: sdktrace.NewTracerProvider(...), // spans per action and step
	})
	if err != nil {
		panic(err)
	}
	telemetry.On(op.Telemetry(), func(e telemetry.ReconcileFailed) {
		fmt.Println(e.Controller, e.Key, "failed:", e.Err)
	})
	fmt.Println("subscribed")
	// Output: subscribed
}

// Preview what an operator would change, and change nothing: every write
// is sent as a dry run. Here one Gadget no operator handled yet would get
// its status and its owned ConfigMap.
func ExamplePreviewOptions() {
	ns := exampleNamespace()
	hc, _ := rest.HTTPClientFor(env.Config)
	gadgets, _ := testapi.NewForConfigAndClient(env.Config, hc)
	_, _ = gadgets.Gadgets(ns).Create(context.Background(), &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Name: "hello"}}, metav1.CreateOptions{})

	var report bytes.Buffer // JSON for tools; os.Stdout by default
	op, err := runtime.New(env.Config, runtime.Options{
		Name:       "greeter-operator",
		Namespaces: []string{ns},
		Logger:     logr.FromSlogHandler(slog.DiscardHandler),
		Preview:    runtime.PreviewOptions{Enabled: true, Format: "json", Output: &report},
	})
	if err != nil {
		panic(err)
	}
	kind, _ := testapi.KindFor(op)
	_, _ = runtime.Register(op, kind, plug.Handler[*testapi.Gadget](greeter{added: make(chan string, 1)}), runtime.ControllerOptions[*testapi.Gadget]{
		Owns: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")},
	})
	err = op.Run(context.Background()) // returns once every object was handled
	fmt.Println(errors.Is(err, runtime.ErrPreviewChanges))
	fmt.Println(err)
	// Output:
	// true
	// runtime: the preview found changes: 2 objects would change, 2 writes, 0 events
}
