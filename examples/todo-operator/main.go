package main

import (
	"github.com/opgen-sdk/opgen/pkg/runtime"

	"github.com/opgen-sdk/opgen/examples/todo-operator/internal/controller"
)

func main() {
	runtime.Main(runtime.Options{Name: "todo-operator"}, controller.Setup)
}
