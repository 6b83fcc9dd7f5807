// Package scheduler runs a custom Kubernetes scheduler inside an opgen
// operator: the user picks a node for a pod, the runtime does the rest.
//
//	cheap := scheduler.Func(func(ctx context.Context, pod *corev1.Pod, nodes iter.Seq[*corev1.Node]) (*corev1.Node, error) {
//		for n := range nodes {
//			if n.Labels["cheap"] == "true" {
//				return n, nil
//			}
//		}
//		return nil, nil // none fits: FailedScheduling, tried again later
//	})
//	err := scheduler.Register(op, cheap, scheduler.Options{Name: "cheap-scheduler"})
//
// Pods opt in with spec.schedulerName: cheap-scheduler.
//
// # Flow
//
//  1. A controller of the runtime (package runtime, with its queue,
//     leader election, pause annotation and telemetry) watches only the
//     Pods that name the scheduler and have no node, with the field
//     selector spec.schedulerName=<name>,spec.nodeName=. Pods are taken
//     one at a time by default (Options.Workers), so each decision sees
//     the previous one.
//  2. SelectNode gets the pod and the candidate nodes, as an iterator:
//     by default every node in the operator's node cache, sorted by name,
//     filtered lazily, as SelectNode iterates, by Fits (schedulable, Ready,
//     taints tolerated, spec.nodeSelector matched). Options.Candidates
//     replaces the list.
//  3. The chosen node is bound with the pods/binding subresource (what
//     kube-scheduler does); a Normal event Scheduled says where. A
//     conflict is retried unless the pod got a node meanwhile, which ends
//     the matter.
//  4. When SelectNode returns no node (or ErrUnschedulable) or an error,
//     or the binding fails, a Warning event FailedScheduling says why and
//     the pod is tried again after a per-pod exponential backoff
//     (Options.InitialBackoff to Options.MaxBackoff), and at once when a
//     node is added or changes.
//
// # Observability
//
// Each outcome is a telemetry event (telemetry.BindSucceeded,
// telemetry.BindFailed) on the operator's bus, which also feeds the
// metrics opgen_scheduler_bindings_total{scheduler,result} (result: bound,
// unschedulable, error) and opgen_scheduler_attempt_duration_seconds.
//
// # Permissions
//
// list and watch on pods; create on pods/binding; list and watch on nodes;
// create and patch on events.k8s.io events; get on pods (only to check a
// conflict).
//
// # Caveats
//
// The scheduler keeps no account of resources: SelectNode decides with
// what the nodes and the pod say, and two schedulers binding to the same
// nodes do not see each other's decisions until the caches do. Node
// affinity, pod (anti-)affinity and topology spread are SelectNode's to
// check. Every node change wakes every waiting pod, as kube-scheduler's
// node events do.
//
// The package is stable: an incompatible change of its API comes with a
// line in CHANGELOG.md that says how to migrate, and, where it can,
// after a release of deprecation.
package scheduler
