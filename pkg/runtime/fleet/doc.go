// Package fleet runs one operator in many clusters from one process.
//
// The home cluster is the one the process is configured for: it holds the
// fleet's Leases and, with the Secrets provider, the member clusters'
// kubeconfigs. A Provider finds the member clusters and tells the fleet
// when one appears, changes or goes; Secrets and Dir are built in. For
// each member cluster it engages, the fleet builds a runtime.Operator on
// that cluster's config and calls the same setup (the generated
// controller.Setup) on it: each cluster has its own caches, work queues
// and clients, and every read and write of an action, its status, owned
// objects, Events and finalizer, goes to the cluster the object is in.
// plug.Action.Cluster names it. A cluster that disengages (its Secret
// deleted) has its operator stopped and its connections closed.
//
// Without sharding the leader, elected in the home cluster, engages every
// cluster. With Options.Sharding each replica holds a member Lease, every
// replica computes the same assignment of clusters to the live members,
// and a replica engages a cluster only while it holds that cluster's
// Lease: two replicas never work in one cluster at once, and a replica's
// clusters move when it stops or its member Lease expires.
//
// The fleet's operator in the home cluster serves /metrics, /healthz and
// /readyz for all: each cluster's opgen_ series carry a label cluster
// once more than one cluster is engaged; opgen_fleet_cluster_ready and
// opgen_fleet_cluster_engaged report each cluster; /readyz reports a
// cluster that is not ready as degraded without failing, since the others
// work. A cluster's logs carry its name.
//
// In chooses the clusters a setup's controllers run in (the home cluster
// only, the members only, or any Selector). Owned keeps objects that
// an owner in one cluster declares in others, and deletes them with the
// owner through its finalizer: no owner reference crosses clusters.
//
// Admission and conversion webhooks are not served in member clusters.
// The RBAC each member cluster needs is written by opgen manifests
// --member. See docs/multicluster.md.
//
// The package is experimental: its API may change in any release, each
// change listed in CHANGELOG.md.
package fleet
