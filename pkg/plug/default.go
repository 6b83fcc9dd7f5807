package plug

import "github.com/opgen-sdk/opgen/apis"

// Default returns the pipeline every controller runs unless it asks for
// another, with h innermost:
//
//	Logger → RecordEvents → AddMissingGVK → Finalizer → ApplyStatus →
//	ApplyOwned → ManagedByLabel → Delegate(h)
//
// Steps run their "before" part in that order and their "after" part in
// reverse. Before the handler: the kind is set on a.Object, the finalizer
// is added (when the handler implements Deleter) and the managed-by label
// is asked for. After it: owned objects are applied and pruned, then the
// status is applied (observedGeneration last, so a crash in between
// repeats the verb rather than losing it), then the finalizer is removed
// (on Delete), then events are emitted (after every write they might
// announce), then the action is logged with its duration.
func Default[T apis.Object](env Env[T], h Handler[T]) Pipeline[T] {
	return Pipeline[T]{
		Named("Logger", Logger[T]()),
		Named("RecordEvents", RecordEvents[T](env.Recorder)),
		Named("AddMissingGVK", AddMissingGVK[T](env.GVK)),
		Named("Finalizer", Finalizer(env)),
		Named("ApplyStatus", ApplyStatus(env)),
		Named("ApplyOwned", ApplyOwned(env)),
		Named("ManagedByLabel", ManagedByLabel[T](env.FieldManager)),
		Named("Delegate", Delegate(h)),
	}
}
