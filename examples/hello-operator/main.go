package main

import (
	"github.com/opgen-sdk/opgen/pkg/runtime"

	"github.com/opgen-sdk/opgen/examples/hello-operator/internal/controller"
)

func main() {
	runtime.Main(runtime.Options{Name: "hello-operator"}, setup)
}

// setup registers the Greeting controller. It reads Deployments from the
// operator's shared cache, so it is built with the operator, through
// SetupGreeting, instead of as the zero value the generated Setup uses.
func setup(op *runtime.Operator) error {
	return controller.SetupGreeting(op, controller.NewGreetingController(op))
}
