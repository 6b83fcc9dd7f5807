package plug

import (
	"context"
	"time"

	"github.com/opgen-sdk/opgen/apis"
)

// Logger logs each action at its end: verb, duration and error.
//
// # Flow
//
// Before the rest of the pipeline it logs "handling" at V(1); after it,
// "handled" at V(1) with the duration, or "handler failed" at V(0) with the
// error (terminal or retried).
//
// # Guarantees
//
// It logs through a.Log, which carries the controller, namespace, name, verb
// and reconcile ID, so every line of one action can be found together.
//
// # Caveats
//
// Put it first: steps outside it are not timed.
func Logger[T apis.Object]() Step[T] {
	return StepFunc[T](func(ctx context.Context, a *Action[T], next Next) error {
		start := time.Now()
		a.Log.V(1).Info("handling")
		err := next(ctx)
		switch {
		case err != nil:
			a.Log.Error(err, "handler failed", "terminal", IsTerminal(err), "duration", time.Since(start))
		case a.Halted():
			a.Log.V(1).Info("halted", "duration", time.Since(start))
		default:
			a.Log.V(1).Info("handled", "duration", time.Since(start), "requeueAfter", a.Requeue())
		}
		return err
	})
}
