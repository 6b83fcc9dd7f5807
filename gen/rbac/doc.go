// Package rbac generates the operator's RBAC under config/rbac: role.yaml,
// the ClusterRole (and any Roles that +kubebuilder:rbac markers ask for),
// and leader_election_role.yaml, the namespaced Role for leader election.
//
// # What the runtime needs
//
// The rules are derived from the controllers, least privilege, then merged
// with the explicit +kubebuilder:rbac markers of every package read:
//
//   - each controller kind: get, list and watch on <plural>; patch on it
//     only when its handler (<Kind>Controller) has Delete, for the
//     finalizer the runtime keeps then, written with server-side apply
//     (read from the controller package's syntax; a handler type that
//     embeds another type may have Delete, and a controller package
//     outside the run may too: patch is granted then); patch on
//     <plural>/status (status is applied with server-side apply); update
//     on <plural>/finalizers only when it owns kinds (needed to set
//     blockOwnerDeletion on owner references of owned objects).
//   - list on any kind the runtime watches, although a watch that streams
//     its initial list (client-go's watch-list) needs no list: an API
//     server that cannot stream it makes client-go fall back to a list.
//   - each owned kind (+opgen:controller:owns): get, list, watch, create,
//     patch and delete (server-side apply creates through patch, which
//     needs create; pruning deletes). A retained kind
//     (+opgen:controller:retain) is not pruned: no delete, unless the
//     controller package calls plug.DeleteNow with an action of the
//     controller's kind (read from the code, as the method sets of
//     handlers are), or with one opgen cannot tell (then every
//     controller's retained kinds keep delete).
//   - each kind a controller reads from its caches
//     (+opgen:controller:reads): get, list and watch, for its informers and
//     the Reader's Get. An owned kind needs no reads marker: owns grants
//     more.
//   - each kind a controller watches through a mapping function
//     (+opgen:controller:watches): list and watch; the runtime watches it
//     metadata-only.
//   - each handler of a built-in kind (+opgen:controller:for on a type of
//     the controller package): get, list and watch on its resource; patch
//     on it only when the handler has Delete, for the finalizer the
//     runtime keeps then (read from the type's method set as the loaded
//     package declares it; when the type embeds a type of another package,
//     whose methods opgen does not load, patch is granted in case Delete
//     comes from there); update on <resource>/finalizers only when it owns
//     kinds (blockOwnerDeletion); never <resource>/status: the cluster
//     writes the status of built-in kinds, so a handler that changes it
//     asks for patch on <resource>/status with a +kubebuilder:rbac marker.
//     get adds nothing list does not give, and lets handlers and tools read
//     one object. Owned kinds are granted as for custom kinds.
//   - events.k8s.io events: create and patch (the runtime's Kubernetes
//     Events), in the ClusterRole.
//   - coordination.k8s.io leases: get, create, update and watch, in the
//     leader-election Role, which is bound in the operator's namespace. The
//     watch lets a standby replica take a released lease at once instead of
//     at its next poll, which makes a graceful handover take milliseconds.
//     list and delete are sharding's: the leader watches the members'
//     Leases and deletes those that expired long ago, so a replica that
//     left for good leaves none behind.
//
// # Why each rule
//
// Each rule of role.yaml is preceded by one comment line per marker or
// derivation that asks for some of its verbs (why.go), which `opgen rbac
// audit` (pkg/rbacaudit) shows beside an unused verb. A verb the runtime
// needs only on a rare path (a prune, an Event that repeats, list where
// the watch cannot stream) says so there.
//
// # A project adopted from kubebuilder
//
// With Generator.Adopted (opgen generate --layout kubebuilder) the
// ClusterRole is named manager-role, which kubebuilder's
// role_binding.yaml binds, and its rules are merged as controller-gen
// merges them: a project whose rules all come from +kubebuilder:rbac
// markers gets controller-gen's role.yaml. The rules derived for opgen's
// controllers join the same role as they move over. No leader-election
// Role is written: the controller-runtime manager that hosts the
// operator holds the one Lease, under kubebuilder's own Role.
//
// # Determinism
//
// Rules are merged per group, resource and resource names (verbs are
// unioned; "*" absorbs the others), then resources with the same group,
// resource names and verbs share a rule. Rules are sorted by group, then
// resources; verbs and resources are sorted. The same inputs give the same
// bytes.
package rbac
