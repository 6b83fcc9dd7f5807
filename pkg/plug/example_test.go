package plug_test

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/opgen-sdk/opgen/pkg/plug"
)

// A pipeline runs its steps around the handler: each step's work before
// next runs in order, its work after next in reverse.
func ExamplePipeline() {
	trace := func(name string) plug.Step[*widget] {
		return plug.StepFunc[*widget](func(ctx context.Context, a *plug.Action[*widget], next plug.Next) error {
			fmt.Println("before", name)
			err := next(ctx)
			fmt.Println("after", name)
			return err
		})
	}
	h := plug.HandlerFuncs[*widget]{OnAdd: func(_ context.Context, a *plug.Action[*widget]) error {
		fmt.Println("Add", a.Object.Name)
		return nil
	}}
	p := plug.Pipeline[*widget]{trace("outer"), trace("inner"), plug.Delegate[*widget](h)}
	_ = p.Run(context.Background(), plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard()))
	// Output:
	// before outer
	// before inner
	// Add w
	// after inner
	// after outer
}

// greeter is a handler with Reconcile alone.
type greeter struct{}

func (greeter) Reconcile(_ context.Context, a *plug.Action[*widget]) error {
	if a.Verb == plug.Add {
		a.Normal("Created", "widget %s created", a.Object.Name)
	}
	fmt.Println("Reconcile for", a.Verb)
	return nil
}

// A handler with Reconcile alone gets every verb but Delete, with a.Verb
// saying which; Add or Modify methods (Adder, Modifier) would take theirs.
func ExampleHandler() {
	step := plug.Delegate[*widget](greeter{})
	for _, v := range []plug.Verb{plug.Add, plug.Modify, plug.Reconcile, plug.Delete} {
		_ = plug.Pipeline[*widget]{step}.Run(context.Background(), plug.NewAction(v, newWidget(1, 0), logr.Discard()))
	}
	// Output:
	// Reconcile for Add
	// Reconcile for Modify
	// Reconcile for Reconcile
}

// A step that halts the pipeline: the handler does not run and the writing
// steps outside it write nothing.
func ExampleStepFunc() {
	paused := plug.StepFunc[*widget](func(ctx context.Context, a *plug.Action[*widget], next plug.Next) error {
		if a.Object.GetAnnotations()["example.com/paused"] == "true" {
			a.Halt()
			return nil
		}
		return next(ctx)
	})
	w := newWidget(1, 0)
	w.Annotations = map[string]string{"example.com/paused": "true"}
	a := plug.NewAction(plug.Add, w, logr.Discard())
	_ = plug.Pipeline[*widget]{paused, plug.Delegate[*widget](plug.HandlerFuncs[*widget]{})}.Run(context.Background(), a)
	fmt.Println("halted:", a.Halted())
	// Output: halted: true
}

// A handler declares what it owns with apply configurations; the
// ApplyOwned step applies them owned by the object and prunes the
// rest.
func ExampleAction_Own() {
	a := plug.NewAction(plug.Add, newWidget(1, 0), logr.Discard())
	a.Own(corev1ac.ConfigMap(a.Object.Name+"-config", "").WithData(map[string]string{"size": "3"}))
	a.Normal("Configured", "declared %d descendants", len(a.Owned()))
	u, _ := plug.AsUnstructured(a.Owned()[0])
	fmt.Println(u.GetKind(), u.GetName())
	fmt.Println(a.Events()[0].Note)
	// Output:
	// ConfigMap w-config
	// declared 1 descendants
}
