package main

import (
	"github.com/opgen-sdk/opgen/pkg/runtime"

	"github.com/opgen-sdk/opgen/examples/todo-operator/internal/controller"
)

func main() {
	// Main binds the runtime's flags (run with -h to list them), loads the
	// kubeconfig or the in-cluster config, registers every controller of
	// the generated controller.Setup and runs until SIGTERM or Ctrl-C.
	runtime.Main(runtime.Options{Name: "todo-operator"}, controller.Setup)
}
