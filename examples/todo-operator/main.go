package main

import (
	"github.com/opgen-sdk/opgen/pkg/runtime"

	"github.com/opgen-sdk/opgen/examples/todo-operator/internal/controller"
)

func main() {
	runtime.Main(runtime.Options{Name: "todo-operator"}, setup)
}

// setup registers the Todo controller with what it needs: a ConfigMap client
// for the archive and the clock.
func setup(op *runtime.Operator) error {
	return controller.SetupTodo(op, controller.NewTodoController(op))
}
