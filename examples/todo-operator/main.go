package main

import (
	"github.com/opgen-sdk/opgen/examples/todo-operator/internal/controller"
	"github.com/opgen-sdk/opgen/pkg/runtime"
)

func main() {
	runtime.Main(runtime.Options{Name: "todo-operator"}, setup)
}

// setup registers the Todo controller with its dependencies (a ConfigMap
// client for the archive, the clock).
func setup(op *runtime.Operator) error {
	return controller.SetupTodo(op, controller.NewTodoController(op))
}
