package manifest

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ShardingRoleSuffix names the ClusterRole that sharding needs beside the
// controllers' role: <name>-sharding.
const ShardingRoleSuffix = "-sharding"

// shardingObjects are the ClusterRole and binding that --sharding needs
// beyond the controllers' role: the leader labels every object of the
// controllers' kinds with its bucket (a patch of metadata.labels), so the
// operator needs patch on each kind of config/crd that the controllers'
// role lets it watch and not yet patch. Without sharding no object is
// labelled, and neither object is written: the role of an operator that
// does not shard stays without patch on kinds it only reads and writes
// the status of. A controller of a built-in kind that shards needs a
// +kubebuilder:rbac marker granting patch on it.
func (o *builder) shardingObjects(crds []map[string]any, role *rbacv1.ClusterRole) []any {
	byGroup := map[string][]string{}
	var groups []string
	for _, crd := range crds {
		spec, _ := crd["spec"].(map[string]any)
		names, _ := spec["names"].(map[string]any)
		group, _ := spec["group"].(string)
		plural, _ := names["plural"].(string)
		if plural == "" || !grants(role.Rules, group, plural, "watch") || grants(role.Rules, group, plural, "patch") {
			continue
		}
		if _, ok := byGroup[group]; !ok {
			groups = append(groups, group)
		}
		byGroup[group] = append(byGroup[group], plural)
	}
	if len(groups) == 0 {
		return nil
	}
	slices.Sort(groups)
	name := o.Name + ShardingRoleSuffix
	sharding := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: o.meta(name, false),
	}
	for _, g := range groups {
		resources := byGroup[g]
		slices.Sort(resources)
		sharding.Rules = append(sharding.Rules, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: resources, Verbs: []string{"patch"}})
	}
	return []any{sharding, o.clusterRoleBinding(name)}
}

// grants reports whether rules allow verb on group's resource.
func grants(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if len(r.ResourceNames) == 0 && matches(r.APIGroups, group) && matches(r.Resources, resource) && matches(r.Verbs, verb) {
			return true
		}
	}
	return false
}

func matches(list []string, s string) bool {
	return slices.Contains(list, s) || slices.Contains(list, rbacv1.ResourceAll)
}
