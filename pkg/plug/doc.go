// Package plug holds what a typed handler works with (the Handler
// interface users implement and the Action it receives) and, apart from
// it, what a step author works with (the Step interface, the Pipeline, the
// built-in steps and what they need from the runtime).
//
// # For handler authors
//
// A handler implements Handler: one Reconcile method. The runtime (package
// runtime) picks a Verb from the object's state and runs the handler's
// method for it (see Delegate): Reconcile for Add, Modify and Reconcile,
// with Action.Verb saying which, unless the handler also implements Adder
// (Add) or Modifier (Modify); Delete, only when the handler implements
// Deleter, which keeps a finalizer on the kind's objects. HandlerFuncs
// adapts functions.
//
//	func (c *GreetingController) Reconcile(ctx context.Context, a *plug.Action[*v1.Greeting]) error {
//		if a.Verb == plug.Add {
//			a.Normal("Created", "serving %q", a.Object.Spec.Greeting)
//		}
//		a.Own(deploymentFor(a.Object), serviceFor(a.Object))
//		a.Object.Status.Phase = "Ready"
//		return nil
//	}
//
// The method receives an Action. Object is a deep copy of the cached object
// that the handler may change; Observed returns the cached object itself.
// The handler changes Object's status and returns nil, an error (retried
// with backoff) or Terminal(err) (recorded, not retried). The steps around
// it write what it declared. What a handler may call:
//
//   - Own declares owned objects (Object makes a typed object one), and
//     SetPrunePolicy decides, for this action, whether undeclared objects
//     of a kind are pruned or kept (a retained kind is kept by default).
//   - ApplyNow, CreateNow and DeleteNow write an owned object at once, when the
//     handler must act on the server's answer: the readers show the write
//     at once, and an action in which they created or deleted an owned object is
//     followed by one more.
//   - Normal, Warning and AddEvent record Events.
//   - RequeueAfter asks for another action after a delay.
//   - Memory keeps values between the actions of one object.
//   - Observed is the object as cached; Owned lists what Own
//     declared so far; Cluster names the cluster of a fleet's action.
//
// The other methods (SetMemory, SetOwned, LabelOwned,
// OwnedLabels, Halt, Halted, Events, Requeue) are for steps.
//
// # For step authors
//
// A Step wraps the rest of the pipeline: it does its work before calling
// next, after it, or both, and may end the pipeline by not calling next
// (Halt marks the action so outer steps know). A Pipeline is an ordered list
// of steps; the first runs first and finishes last. Default builds the
// standard one from an Env (what the steps need to know about their
// controller: its kind, client, finalizer, store of owned objects and event
// recorder, filled by the runtime):
//
//	Logger → RecordEvents → AddMissingGVK → Finalizer → ApplyStatus →
//	ApplyOwned → ManagedByLabel → Delegate(handler)
//
// So, after the handler returns: owned objects are applied (with the
// managed-by label) and pruned; then the status is applied (with observedGeneration, which is
// why a failure to apply owned objects repeats the verb); then, on Delete,
// the finalizer is removed; then events are emitted; then the action is
// logged. Every writing step skips writes that would change nothing.
//
// Steps read and change the action through the methods a handler does not
// need: Owned and SetOwned, LabelOwned, Events and
// AddEvent, Requeue, Halt and Halted, and Memory, the per-object scratch
// space the runtime keeps between actions (see Memory). WriteStatus writes
// a status outside the pipeline, as ApplyStatus does.
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
// and add it with runtime.ControllerOptions.Steps, or build a whole
// pipeline with runtime.ControllerOptions.Pipeline (not both).
//
// The package is stable: an incompatible change of its API comes with a
// line in CHANGELOG.md that says how to migrate, and, where it can,
// after a release of deprecation.
package plug
