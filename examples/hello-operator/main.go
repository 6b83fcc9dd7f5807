package main

import (
	"github.com/opgen-sdk/opgen/pkg/runtime"

	"github.com/opgen-sdk/opgen/examples/hello-operator/internal/controller"
)

func main() {
	runtime.Main(runtime.Options{Name: "hello-operator"}, controller.Setup)
}
