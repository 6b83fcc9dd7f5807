package main

import (
	"github.com/opgen-sdk/opgen/pkg/runtime"

	"example.com/widget-operator/internal/controller"
)

// The user's code: opgen upgrade never touches it.
func main() {
	runtime.Main(runtime.Options{Name: "widget-operator", Workers: 4}, controller.Setup)
}
