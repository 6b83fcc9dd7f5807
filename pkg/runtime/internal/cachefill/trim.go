package cachefill

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Own reports whether e is the operator's own apply to the main resource.
// That entry tells whether someone changed a field the operator applied.
func Own(e *metav1.ManagedFieldsEntry, manager string) bool {
	return e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == ""
}

// Trim is the transform of every cache: it keeps of managedFields the
// operator's own entry and, with heads, every other entry without its
// field set (manager, operation, apiVersion, time, subresource). Then it
// interns the object's strings.
func Trim(obj any, manager string, heads bool) (any, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return obj, nil
	}
	defer Intern(obj)
	entries := m.GetManagedFields()
	if entries == nil {
		return obj, nil
	}
	var out []metav1.ManagedFieldsEntry
	for i := range entries {
		e := entries[i]
		switch {
		case Own(&e, manager):
		case heads:
			e.FieldsType, e.FieldsV1 = "", nil
		default:
			continue
		}
		out = append(out, e)
	}
	m.SetManagedFields(out)
	return obj, nil
}
