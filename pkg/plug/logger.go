package plug

import (
	"context"
	"time"

	"github.com/go-logr/logr"

	"github.com/opgen-sdk/opgen/apis"
)

// Logger logs each action at its end: verb, duration and error; and each
// apply the steps inside it make (the status, every descendant, every
// Kubernetes Event).
//
// # Flow
//
// Before the rest of the pipeline it logs "handling" at V(1); after it,
// "handled" at V(1) with the duration, or "handler failed" at V(0) with the
// error (terminal or retried). While the rest runs, each apply is logged
// as "applied" at V(1) with its kind, name, result (ApplyCreatedOrChanged,
// ApplyUnchanged, ApplyFailed, ApplyPruned, ApplyEmitted) and duration.
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
		debug := a.Log.V(1)
		on := debug.Enabled() // checked first: a disabled Info call boxes its arguments all the same
		if on {
			debug.Info("handling")
			ctx = context.WithValue(ctx, applyLogKey{}, debug) // only then: a disabled apply log costs nothing per apply
		}
		err := next(ctx)
		switch {
		case err != nil:
			a.Log.Error(err, "handler failed", "terminal", IsTerminal(err), "duration", time.Since(start))
		case !on:
		case a.Halted():
			debug.Info("halted", "duration", time.Since(start))
		default:
			debug.Info("handled", "duration", time.Since(start), "requeueAfter", a.Requeue())
		}
		return err
	})
}

// Results of an apply, as the Logger step logs them.
const (
	ApplyCreatedOrChanged = "applied"
	ApplyUnchanged        = "unchanged"
	ApplyFailed           = "failed"
	ApplyPruned           = "pruned"
	ApplyEmitted          = "emitted"
)

type applyLogKey struct{}

// logApply logs one apply of the object namespace/name (name alone when
// namespace is empty) through the Logger step's V(1) logger in ctx; without
// a Logger step outside the caller, or with V(1) off, it does nothing.
func logApply(ctx context.Context, kind, namespace, name, result string, start time.Time) {
	log, ok := ctx.Value(applyLogKey{}).(logr.Logger)
	if !ok {
		return
	}
	if namespace != "" {
		name = namespace + "/" + name
	}
	log.Info("applied", "kind", kind, "object", name, "result", result, "duration", time.Since(start))
}

// applyResult is ApplyFailed when err is set, else ok.
func applyResult(err error, ok string) string {
	if err != nil {
		return ApplyFailed
	}
	return ok
}
