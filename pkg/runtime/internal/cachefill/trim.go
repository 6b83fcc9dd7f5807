package cachefill

import (
	"encoding/binary"
	"hash/fnv"

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
// runs project, when set (a controller's projection), and interns the
// strings of what is left: what project drops neither fills the tables
// nor shares the allocation of the strings kept.
func Trim(obj any, manager string, heads bool, project func(any)) (any, error) {
	trim(obj, manager, heads)
	if project != nil {
		project(obj)
	}
	Intern(obj)
	return obj, nil
}

// trim is Trim without Intern.
func trim(obj any, manager string, heads bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	entries := m.GetManagedFields()
	if entries == nil {
		return
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
}

// FieldsHashType is the FieldsType of an own entry that TrimOwned kept in
// short: FieldsV1.Raw holds the hash of the field set (8 bytes), then the
// value of the object's hash annotation, not JSON. Only the runtime's
// internal caches hold such entries.
const FieldsHashType = "opgen.dev/fields-hash"

// TrimOwned is the transform of the caches of owned and watched kinds,
// which no handler reads. It is Trim, but of the operator's own entry it
// keeps only the hash of the field set, not the set nor the time; and it
// moves the annotation hashAnnotation into that entry (OwnApply). Small
// maps are dear in Go: an object whose only annotation that was keeps
// none.
func TrimOwned(obj any, manager, hashAnnotation string) (any, error) {
	trim(obj, manager, false)
	defer Intern(obj) // last: the annotations change below, a shared map must not
	m, ok := obj.(metav1.Object)
	if !ok {
		return obj, nil
	}
	entries := m.GetManagedFields()
	for i := range entries {
		e := &entries[i]
		if !Own(e, manager) || e.FieldsV1 == nil || e.FieldsType == FieldsHashType {
			continue
		}
		raw := binary.BigEndian.AppendUint64(nil, FieldsHash(e.FieldsV1.GetRawBytes()))
		if a := m.GetAnnotations(); a != nil {
			raw = append(raw, a[hashAnnotation]...)
			delete(a, hashAnnotation)
			if len(a) == 0 {
				m.SetAnnotations(nil)
			}
		}
		e.FieldsType, e.Time = FieldsHashType, nil
		e.FieldsV1 = metav1.NewFieldsV1(string(raw))
	}
	m.SetManagedFields(entries)
	return obj, nil
}

// FieldsHash is the hash of a managedFields entry's field set, as the API
// server serializes it (FieldsV1).
func FieldsHash(fieldsV1 []byte) uint64 {
	h := fnv.New64a()
	h.Write(fieldsV1)
	return h.Sum64()
}

// OwnApply returns, of the operator's own apply to m, the hash of its
// field set, and the value of m's annotation hashAnnotation; from the
// whole entry, or from one TrimOwned kept. ok is false when there is no
// entry.
func OwnApply(m metav1.Object, manager, hashAnnotation string) (fields uint64, hash string, ok bool) {
	entries := m.GetManagedFields()
	for i := range entries {
		e := &entries[i]
		switch {
		case !Own(e, manager) || e.FieldsV1 == nil:
		case e.FieldsType == FieldsHashType && len(e.FieldsV1.GetRawBytes()) >= 8:
			raw := e.FieldsV1.GetRawBytes()
			return binary.BigEndian.Uint64(raw), string(raw[8:]), true
		default:
			return FieldsHash(e.FieldsV1.GetRawBytes()), m.GetAnnotations()[hashAnnotation], true
		}
	}
	return 0, "", false
}
