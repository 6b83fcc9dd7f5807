package runtime

import (
	"errors"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
)

// Register adds a controller for kind, run by h, to op. It must be called
// before op.Run.
func Register[T apis.Object](op *Operator, kind Kind[T], h plug.Handler[T], opts ControllerOptions[T]) error {
	return errors.New("runtime.Register: the typed runtime is not wired yet")
}
