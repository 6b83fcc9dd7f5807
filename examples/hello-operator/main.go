package main

import (
	"github.com/opgen-sdk/opgen/examples/hello-operator/internal/controller"
	"github.com/opgen-sdk/opgen/pkg/runtime"
)

func main() {
	runtime.Main(runtime.Options{Name: "hello-operator"}, setup)
}

// setup registers the Greeting controller; it has a dependency (the
// operator's Deployment cache), so it is set up by hand instead of through
// the generated controller.Setup.
func setup(op *runtime.Operator) error {
	return controller.SetupGreeting(op, controller.NewGreetingController(op))
}
