// Package plug holds what a typed handler works with: the Action that
// carries one object through a pipeline for one verb, the Handler interface
// users implement, the Step interface and Pipeline, and the built-in steps.
//
// # Actions
//
// The runtime (package runtime) picks a Verb from the object's state and
// makes an Action: Object is a deep copy of the cached object that the
// handler may change; Observed is the cached object itself. The handler
// changes Object's status, declares descendants with Own, records events
// with Normal and Warning, asks for another action with RequeueAfter, and
// returns nil, an error (retried with backoff) or Terminal(err) (recorded,
// not retried). The steps around it write what it declared.
//
// # Pipelines
//
// A Step wraps the rest of the pipeline: it does its work before calling
// next, after it, or both, and may end the pipeline by not calling next
// (Halt marks the action so outer steps know). A Pipeline is an ordered list
// of steps; the first runs first and finishes last. Default builds the
// standard one from an Env (what the steps need to know about their
// controller, filled by the runtime):
//
//	Logger → RecordEvents → AddMissingGVK → Finalizer → ApplyStatus →
//	ApplyDescendants → ManagedByLabel → Delegate(handler)
//
// So, after the handler returns: descendants are applied (with the
// managed-by label) and pruned; then the status is applied (with observedGeneration, which is
// why a failure to apply descendants repeats the verb); then, on Delete,
// the finalizer is removed; then events are emitted; then the action is
// logged. Every writing step skips writes that would change nothing.
//
// Write a step as a StepFunc:
//
//	pause := plug.StepFunc[*v1.Greeting](func(ctx context.Context, a *plug.Action[*v1.Greeting], next plug.Next) error {
//		if a.Object.GetAnnotations()["example.com/paused"] == "true" {
//			a.Halt() // a halted action writes nothing
//			return nil
//		}
//		return next(ctx)
//	})
//
// and add it with runtime.ControllerOptions.Steps.
package plug
