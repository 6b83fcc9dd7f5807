// Package builtin gives typed controllers for Kubernetes' built-in kinds:
// one Kind constructor per kind (Pods, Nodes, Deployments, Jobs, ...),
// built on client-go's typed clients and the operator's shared HTTP
// client, so that a controller for Pods is registered exactly like one
// for a custom kind, with the same lifecycle methods, pipeline, periodic
// reconcile, pause annotation and telemetry:
//
//	_, err := runtime.Register(op, builtin.Pods(op, builtin.Options{}), plug.Handler[*corev1.Pod](printer), runtime.ControllerOptions[*corev1.Pod]{})
//
// # What differs from custom kinds
//
// Built-in kinds have no status.observedGeneration the runtime could use,
// and the cluster, not the operator, writes their status. So:
//
//   - Their default UpdateFilter is runtime.AnyChange: every change wakes
//     the handler, status changes included (a pod printer sees a Pod turn
//     Running). Set ControllerOptions.UpdateFilter to
//     runtime.GenerationOrMetadataChanged to ignore status-only changes.
//   - The record of handled generations is in memory: the first sight of
//     an object in a process is Add (after a restart, every object gets
//     Add again), a spec change (a new metadata.generation) is Modify, and
//     anything else, status changes included, is Reconcile. Kinds without
//     metadata.generation (ConfigMap, Secret, Namespace...) never get
//     Modify.
//   - The operator writes nothing to them unless the handler does: the
//     status is applied only when the handler changed it, and a finalizer
//     is kept only when the handler implements plug.Deleter. Name that
//     finalizer with ControllerOptions.Finalizer: the default
//     (<kind>.opgen.dev/finalizer, or <group>/finalizer) is the same for
//     every controller of the kind, in this operator and in others, and
//     the first to finish its Delete would remove it for all.
//
// # Selecting objects
//
// Options.LabelSelector and Options.FieldSelector narrow the watch, and
// so the cache: the scheduler (package scheduler) watches only the
// unscheduled Pods that name it with
// FieldSelector "spec.schedulerName=<name>,spec.nodeName=". An object that
// stops matching looks deleted to the controller.
//
// # Permissions
//
// A controller for a built-in kind needs list and watch on its resource,
// and patch when the handler implements plug.Deleter (the finalizer) or
// changes the status (patch on <resource>/status); get is not needed.
// The handler's own writes (deleting a Pod, evicting one) need their own
// verbs.
//
// # From markers
//
// opgen generate registers such a controller from a marker on a handler
// type of the project's controller package, which the generator's table
// of built-in kinds maps to its constructor:
//
//	// PodPrinter logs every Pod.
//	// +opgen:controller:for=v1.Pod
//	type PodPrinter struct{}
//
// The generated glue declares SetupPodPrinter and PodPrinterOptions, adds
// the type to Setup, names the finalizer <operator>.opgen.dev/<handler> and
// the generated ClusterRole grants the verbs above, get included (see
// package gen/rbac).
//
// The constructors are generated from that table (kinds.Builtin), which
// the generator reads too without linking this package; to add a kind,
// add a line there and run go generate in this directory.
//
// The package is stable: an incompatible change of its API comes with a
// line in CHANGELOG.md that says how to migrate, and, where it can,
// after a release of deprecation.
package builtin

//go:generate go run ./internal/kindgen/cmd
