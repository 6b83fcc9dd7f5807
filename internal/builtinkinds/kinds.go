// Package builtinkinds is the table of Kubernetes' built-in kinds opgen knows:
// their group, version, resource, scope and Go package. It is data only
// and imports nothing, so that both sides read one table: the generator
// (package gen, the opgen command), which maps a marker such as
// +opgen:controller:for=v1.Pod to a kind and derives its RBAC, and
// package pkg/runtime/builtin, whose Kind constructors are generated from
// it.
//
// To add a kind, add a line to Builtin and run go generate in
// pkg/runtime/builtin.
package builtinkinds

import "strings"

// Info describes one built-in kind and its Kind constructor in package
// pkg/runtime/builtin.
type Info struct {
	// Marker spells the kind as opgen's markers do: "v1.Pod",
	// "apps/v1.Deployment".
	Marker string
	// Func is the constructor's name in package builtin, such as "Pods";
	// it is also client-go's clientset method for the kind.
	Func string
	// Group ("" for core), Version and Kind are the kind's GVK.
	Group, Version, Kind string
	// Resource is the plural resource, for RBAC rules.
	Resource string
	// Namespaced is false for cluster-scoped kinds.
	Namespaced bool
	// Package is the Go package of the kind's types, such as
	// "k8s.io/api/core/v1": generated code imports it to name the type.
	Package string
	// Alias is the import name generated code gives Package ("corev1",
	// "appsv1").
	Alias string
	// Clientset is client-go's clientset method for the group version
	// ("CoreV1", "AppsV1").
	Clientset string
}

// Builtin is every built-in kind, in the order of package builtin's
// constructors.
var Builtin = []Info{
	core("Pod", "Pods", "pods", true),
	core("Node", "Nodes", "nodes", false),
	core("Namespace", "Namespaces", "namespaces", false),
	core("ConfigMap", "ConfigMaps", "configmaps", true),
	core("Secret", "Secrets", "secrets", true),
	core("Service", "Services", "services", true),
	core("ServiceAccount", "ServiceAccounts", "serviceaccounts", true),
	core("PersistentVolumeClaim", "PersistentVolumeClaims", "persistentvolumeclaims", true),
	core("PersistentVolume", "PersistentVolumes", "persistentvolumes", false),
	apps("Deployment", "Deployments", "deployments", true),
	apps("StatefulSet", "StatefulSets", "statefulsets", true),
	apps("DaemonSet", "DaemonSets", "daemonsets", true),
	apps("ReplicaSet", "ReplicaSets", "replicasets", true),
	batch("Job", "Jobs", "jobs", true),
	batch("CronJob", "CronJobs", "cronjobs", true),
	networking("Ingress", "Ingresses", "ingresses", true),
	networking("IngressClass", "IngressClasses", "ingressclasses", false),
	networking("NetworkPolicy", "NetworkPolicies", "networkpolicies", true),
	policy("PodDisruptionBudget", "PodDisruptionBudgets", "poddisruptionbudgets", true),
	discovery("EndpointSlice", "EndpointSlices", "endpointslices", true),
	autoscaling("HorizontalPodAutoscaler", "HorizontalPodAutoscalers", "horizontalpodautoscalers", true),
	storage("StorageClass", "StorageClasses", "storageclasses", false),
	rbac("Role", "Roles", "roles", true),
	rbac("RoleBinding", "RoleBindings", "rolebindings", true),
	rbac("ClusterRole", "ClusterRoles", "clusterroles", false),
	rbac("ClusterRoleBinding", "ClusterRoleBindings", "clusterrolebindings", false),
	coordination("Lease", "Leases", "leases", true),
	scheduling("PriorityClass", "PriorityClasses", "priorityclasses", false),
}

// Lookup returns the entry of group, version and kind.
func Lookup(group, version, kind string) (Info, bool) {
	for _, k := range Builtin {
		if k.Group == group && k.Version == version && k.Kind == kind {
			return k, true
		}
	}
	return Info{}, false
}

var (
	core         = group("", "v1", "CoreV1")
	apps         = group("apps", "v1", "AppsV1")
	batch        = group("batch", "v1", "BatchV1")
	networking   = group("networking.k8s.io", "v1", "NetworkingV1")
	policy       = group("policy", "v1", "PolicyV1")
	discovery    = group("discovery.k8s.io", "v1", "DiscoveryV1")
	autoscaling  = group("autoscaling", "v2", "AutoscalingV2")
	storage      = group("storage.k8s.io", "v1", "StorageV1")
	rbac         = group("rbac.authorization.k8s.io", "v1", "RbacV1")
	coordination = group("coordination.k8s.io", "v1", "CoordinationV1")
	scheduling   = group("scheduling.k8s.io", "v1", "SchedulingV1")
)

// group returns the constructor of a group version's entries: the
// package is k8s.io/api/<first label of the group, or core>/<version>,
// imported as that label and the version (corev1, rbacv1).
func group(group, version, clientset string) func(kind, fn, resource string, namespaced bool) Info {
	short, marker := "core", version
	if group != "" {
		short, marker = strings.SplitN(group, ".", 2)[0], group+"/"+version
	}
	return func(kind, fn, resource string, namespaced bool) Info {
		return Info{Marker: marker + "." + kind, Func: fn, Group: group, Version: version, Kind: kind,
			Resource: resource, Namespaced: namespaced, Package: "k8s.io/api/" + short + "/" + version,
			Alias: short + version, Clientset: clientset}
	}
}
