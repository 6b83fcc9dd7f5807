// Package migrationrules holds the RBAC rules of the runtime's storage
// migration: what the leader needs to move a custom resource's objects to
// a new storage version. gen/rbac writes them into an operator's role, and
// the runtime's migration tests run under them alone, so the two agree by
// construction.
package migrationrules

import rbacv1 "k8s.io/api/rbac/v1"

// For are the rules of the leader's storage migration of the custom
// resource plural.group (pkg/runtime): it reads and watches the resource's
// CRD by name to compare status.storedVersions with the storage version.
// A kind served in several versions (versions) may need its objects moved
// to a new storage version: then it also creates and reads
// StorageVersionMigrations (their names carry the CRD's resourceVersion,
// so they cannot be narrowed by name), or writes each object again (list
// and update on the kind), records its progress on the CRD (patch) and
// trims status.storedVersions (update on the status).
func For(group, plural string, versions bool) []rbacv1.PolicyRule {
	crd := []string{plural + "." + group}
	rules := []rbacv1.PolicyRule{{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, ResourceNames: crd, Verbs: []string{"get", "list", "watch"}}}
	if !versions {
		return rules
	}
	return append(rules,
		rbacv1.PolicyRule{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, ResourceNames: crd, Verbs: []string{"patch"}},
		rbacv1.PolicyRule{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions/status"}, ResourceNames: crd, Verbs: []string{"update"}},
		rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{plural}, Verbs: []string{"list", "update"}},
		rbacv1.PolicyRule{APIGroups: []string{"storagemigration.k8s.io"}, Resources: []string{"storageversionmigrations"}, Verbs: []string{"create", "get", "delete"}},
	)
}
