package runtime_test

import (
	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// register is runtime.Register for tests that need only its error.
func register[T apis.Object](op *runtime.Operator, kind runtime.Kind[T], h plug.Handler[T], opts runtime.ControllerOptions[T]) error {
	_, err := runtime.Register(op, kind, h, opts)
	return err
}
