package plug

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/go-logr/logr"

	"github.com/opgen-sdk/opgen/apis"
)

// SkipObservedGenerations halts the pipeline for the listed verbs when the
// object's status.observedGeneration equals its metadata.generation.
//
// # Flow
//
// For an action whose verb is listed and whose object implements
// apis.ObservedGenerationObject with observedGeneration == generation, it
// calls a.Halt and returns nil without running the rest of the pipeline.
// Otherwise it runs the rest.
//
// # Guarantees
//
// A halted action writes nothing (ApplyStatus and ApplyOwned skip
// halted actions) and counts as handled.
//
// # Caveats
//
// Opt-in: the runtime already picks Reconcile instead of Modify when the
// generation was handled. Listing Reconcile here turns periodic and
// owned-object reconciles into no-ops. Objects without observedGeneration
// are never skipped.
func SkipObservedGenerations[T apis.Object](verbs ...Verb) Step[T] {
	return StepFunc[T](func(ctx context.Context, a *Action[T], next Next) error {
		og, ok := any(a.Observed()).(apis.ObservedGenerationObject)
		if ok && slices.Contains(verbs, a.Verb) && og.GetObservedGeneration() == og.GetGeneration() {
			a.Halt()
			return nil
		}
		return next(ctx)
	})
}

// AddMissingGVK sets apiVersion and kind on a.Object when they are empty,
// as they are on objects decoded by typed clients and informers.
//
// # Flow
//
// Before the rest of the pipeline, if a.Object has no kind, it sets gvk.
//
// # Guarantees
//
// Steps after it, the handler, and RecordEvents (which needs the kind to
// reference the object) see a.Object with its apiVersion and kind.
//
// # Caveats
//
// It changes a.Object, never the cached object a.Observed() returns.
func AddMissingGVK[T apis.Object](gvk schema.GroupVersionKind) Step[T] {
	return StepFunc[T](func(ctx context.Context, a *Action[T], next Next) error {
		if a.Object.GetObjectKind().GroupVersionKind().Kind == "" {
			a.Object.GetObjectKind().SetGroupVersionKind(gvk)
		}
		return next(ctx)
	})
}

// ManagedByLabelKey is the well-known label ManagedByLabel sets.
const ManagedByLabelKey = "app.kubernetes.io/managed-by"

// ManagedByLabel labels every declared owned object with
// app.kubernetes.io/managed-by=value.
//
// # Flow
//
// Before the rest of the pipeline it asks, with a.LabelOwned, for the
// label on every owned object; ApplyOwned adds it to each owned object
// that does not set the label itself.
//
// # Guarantees
//
// Wherever it stands in the pipeline, every owned object ApplyOwned
// applies carries the label, so `kubectl get -l
// app.kubernetes.io/managed-by=<operator>` lists what the operator made.
// The label is part of the applied body and of its hash.
//
// # Caveats
//
// A label the handler sets on an owned object wins. Without ApplyOwned
// it has no effect.
func ManagedByLabel[T apis.Object](value string) Step[T] {
	labels := map[string]string{ManagedByLabelKey: value}
	return StepFunc[T](func(ctx context.Context, a *Action[T], next Next) error {
		a.shareLabels(labels)
		return next(ctx)
	})
}

// Delegate calls the handler's method for the action's verb: Add when the
// handler is an Adder, Modify when it is a Modifier, Delete when it is a
// Deleter, and Reconcile for every other verb but Delete.
//
// # Flow
//
// It is the innermost step; it does not call next.
//
// # Guarantees
//
// The handler sees a.Object as a deep copy of the cached object with every
// change the steps before it made (apiVersion and kind set, the finalizer
// added), and a.Verb unchanged: a Reconcile that runs for an Add sees
// a.Verb == Add.
//
// # Caveats
//
// For Delete on a handler that is not a Deleter it does nothing (Reconcile
// never runs for a deletion): the Finalizer step then only removes the
// finalizer.
func Delegate[T apis.Object](h Handler[T]) Step[T] {
	add, modify := h.Reconcile, h.Reconcile
	if ad, ok := h.(Adder[T]); ok {
		add = ad.Add
	}
	if m, ok := h.(Modifier[T]); ok {
		modify = m.Modify
	}
	del := func(context.Context, *Action[T]) error { return nil }
	if d, ok := h.(Deleter[T]); ok {
		del = d.Delete
	}
	return StepFunc[T](func(ctx context.Context, a *Action[T], _ Next) (err error) {
		// A panic is the handler's error: the steps around it (status,
		// events, metrics) see it as they see any other.
		defer Recover(a, &err)
		switch a.Verb {
		case Add:
			return add(ctx, a)
		case Modify:
			return modify(ctx, a)
		case Reconcile:
			return h.Reconcile(ctx, a)
		case Delete:
			return del(ctx, a)
		}
		return Terminal(fmt.Errorf("plug: unknown verb %q", a.Verb))
	})
}

// Recover, deferred, turns a panic into *err, which is then retried like
// any error, and logs it with its stack on a.Log. Delegate recovers the
// handler's panics so; the runtime recovers those of the other steps.
func Recover[T apis.Object](a *Action[T], err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("handler panicked: %v", r)
		a.Log.Error(*err, "recovered a panic", "stack", string(debug.Stack()))
	}
}

// maxNote is the API server's limit on an Event's note, in bytes.
const maxNote = 1024

// truncateNote cuts note to maxNote bytes on a rune boundary, ending it
// with "..." when cut: the server rejects longer notes.
func truncateNote(note string) string {
	if len(note) <= maxNote {
		return note
	}
	cut := maxNote - len("...")
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + "..."
}

// Event reasons RecordEvents uses for failures.
const (
	ReasonFailed   = "Failed"
	ReasonTerminal = "TerminalError"
)

// RecordEvents emits the events the action recorded (a.Normal, a.Warning)
// as Kubernetes Events about a.Object, and a Warning for a failure.
//
// # Flow
//
// After the rest of the pipeline, it emits each recorded event in order;
// then, if the pipeline failed, a Warning with reason Failed (retried) or
// TerminalError (not retried) and the error as the note.
//
// # Guarantees
//
// Events are emitted after the API writes of the steps inside it, so an
// event never announces a change that was not made: when the pipeline
// failed, the Normal events it recorded are dropped (Warnings are kept).
// Notes are cut to the server's 1 KiB limit. Emission is
// asynchronous and never fails the action; client-go's recorder merges
// repeats into series.
//
// # Caveats
//
// a.Object needs its apiVersion and kind (AddMissingGVK, inside it, sets
// them). Events are best effort: they can be dropped under load.
func RecordEvents[T apis.Object](r EventRecorder) Step[T] {
	return StepFunc[T](func(ctx context.Context, a *Action[T], next Next) error {
		err := next(ctx)
		if r == nil {
			return err
		}
		if err != nil && OutcomeUnknown(err) {
			// The action stopped with the operator (it no longer leads, or
			// shuts down): whether its last write was stored is not known,
			// and it is nothing to warn about. It runs again where the
			// operator leads next.
			return err
		}
		for _, e := range a.events {
			if err != nil && e.Type == corev1.EventTypeNormal {
				continue // announces what the failed action did not finish
			}
			start := time.Now()
			r.Eventf(a.Object, nil, e.Type, e.Reason, e.Action, "%s", truncateNote(e.Note))
			logApply(ctx, "Event", "", e.Reason, ApplyEmitted, start)
		}
		if err != nil {
			reason := ReasonFailed
			if IsTerminal(err) {
				reason = ReasonTerminal
			}
			r.Eventf(a.Object, nil, corev1.EventTypeWarning, reason, string(a.Verb), "%s", truncateNote(err.Error()))
		}
		return err
	})
}

// Logger logs each action at its end: verb, duration and error; and each
// apply the steps inside it make (the status, every owned object, every
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
		case err != nil && OutcomeUnknown(err):
			a.Log.Info("stopped before it finished: whether its last write was stored is unknown; it runs again where the operator leads next", "reason", err.Error(), "duration", time.Since(start))
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

// OutcomeUnknown reports whether err stopped an action without saying
// whether its write was stored: the action's context was cancelled (the
// operator stopped leading or shuts down) while a request was in flight,
// or the runtime refused to send a write (an error whose NotSent method
// says so: this replica may no longer lead). Such an action failed in no
// way the object's owner should hear of: RecordEvents records no Warning
// for it, and the runtime counts it as unknown, not as an error.
func OutcomeUnknown(err error) bool {
	var notSent interface{ NotSent() bool }
	return errors.Is(err, context.Canceled) || (errors.As(err, &notSent) && notSent.NotSent())
}
