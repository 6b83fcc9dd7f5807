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

// FieldsHashType is the FieldsType of an own entry that TrimOwned kept as
// the hash of its field set: FieldsV1.Raw holds the hash, 8 bytes, not
// JSON. Only the runtime's internal caches hold such entries.
const FieldsHashType = "opgen.dev/fields-hash"

// TrimOwned is the transform of the caches of owned and watched kinds,
// which no handler reads. It is Trim, but of the operator's own entry it
// keeps only the hash of the field set (OwnFields), not the set nor the
// time.
func TrimOwned(obj any, manager string) (any, error) {
	obj, err := Trim(obj, manager, false)
	m, ok := obj.(metav1.Object)
	if err != nil || !ok {
		return obj, err
	}
	entries := m.GetManagedFields()
	for i := range entries {
		if e := &entries[i]; Own(e, manager) && e.FieldsV1 != nil && e.FieldsType != FieldsHashType {
			sum := FieldsHash(e.FieldsV1.Raw)
			e.FieldsType, e.Time = FieldsHashType, nil
			e.FieldsV1 = &metav1.FieldsV1{Raw: binary.BigEndian.AppendUint64(make([]byte, 0, 8), sum)}
		}
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

// OwnFields returns the hash of the field set of the operator's own entry
// in m, whole or kept by TrimOwned; false when there is none.
func OwnFields(m metav1.Object, manager string) (uint64, bool) {
	entries := m.GetManagedFields()
	for i := range entries {
		e := &entries[i]
		switch {
		case !Own(e, manager) || e.FieldsV1 == nil:
		case e.FieldsType == FieldsHashType && len(e.FieldsV1.Raw) == 8:
			return binary.BigEndian.Uint64(e.FieldsV1.Raw), true
		default:
			return FieldsHash(e.FieldsV1.Raw), true
		}
	}
	return 0, false
}
