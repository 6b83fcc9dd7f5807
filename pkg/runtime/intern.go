package runtime

import (
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// internMax is the longest string internMeta shares: longer ones (a
// last-applied-configuration annotation) are rarely repeated and cost more
// to hash than they would save.
const internMax = 128

// intern returns the canonical copy of s (unique.Make): every cached
// object decoded while the copy lives shares its bytes. It keeps no table
// of its own: a string no object holds any more is collected as usual.
func intern(s string) string {
	if s == "" || len(s) > internMax {
		return s
	}
	return unique.Make(s).Value()
}

// internMeta replaces the strings that repeat from object to object in m's
// metadata (namespace, label and annotation keys and values, owner
// reference kinds, managedFields heads) by shared copies. The values do
// not change: a handler sees the same object.
func internMeta(m metav1.Object) {
	m.SetNamespace(intern(m.GetNamespace()))
	if l := m.GetLabels(); len(l) > 0 {
		m.SetLabels(internMap(l))
	}
	if a := m.GetAnnotations(); len(a) > 0 {
		m.SetAnnotations(internMap(a))
	}
	if refs := m.GetOwnerReferences(); len(refs) > 0 {
		for i := range refs {
			refs[i].APIVersion = intern(refs[i].APIVersion)
			refs[i].Kind = intern(refs[i].Kind)
		}
		m.SetOwnerReferences(refs)
	}
	if entries := m.GetManagedFields(); len(entries) > 0 {
		for i := range entries {
			e := &entries[i]
			e.Manager, e.APIVersion, e.FieldsType, e.Subresource = intern(e.Manager), intern(e.APIVersion), intern(e.FieldsType), intern(e.Subresource)
			e.Operation = metav1.ManagedFieldsOperationType(intern(string(e.Operation)))
		}
		m.SetManagedFields(entries)
	}
}

// internMap returns m with its keys and values interned.
func internMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[intern(k)] = intern(v)
	}
	return out
}
