package plug

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Unstructured wraps an unstructured object as a Descendant, for objects
// built without an apply configuration (and for steps that rewrite
// descendants, such as ManagedByLabel).
func Unstructured(u *unstructured.Unstructured) Descendant { return unstructuredDescendant{u} }

type unstructuredDescendant struct{ u *unstructured.Unstructured }

func (unstructuredDescendant) IsApplyConfiguration() {}

func (d unstructuredDescendant) GetAPIVersion() *string { return strPtr(d.u.GetAPIVersion()) }
func (d unstructuredDescendant) GetKind() *string       { return strPtr(d.u.GetKind()) }
func (d unstructuredDescendant) GetName() *string       { return strPtr(d.u.GetName()) }
func (d unstructuredDescendant) GetNamespace() *string  { return strPtr(d.u.GetNamespace()) }

// MarshalJSON makes the wrapper encode as the object it wraps.
func (d unstructuredDescendant) MarshalJSON() ([]byte, error) { return d.u.MarshalJSON() }

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// AsUnstructured returns d as an unstructured object: the object itself for
// one made by Unstructured, otherwise the JSON of the apply configuration
// decoded. It fails when d has no apiVersion, kind or name.
func AsUnstructured(d Descendant) (*unstructured.Unstructured, error) {
	if w, ok := d.(unstructuredDescendant); ok {
		return w.u, checkIdentity(w.u)
	}
	data, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encode descendant %T: %w", d, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("decode descendant %T: %w (set its apiVersion and kind: apply configurations built with their constructor, such as appsv1ac.Deployment(name, ns), have them)", d, err)
	}
	return u, checkIdentity(u)
}

func checkIdentity(u *unstructured.Unstructured) error {
	if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
		return fmt.Errorf("descendant %s %q lacks apiVersion, kind or name: build it with its apply configuration constructor, such as corev1ac.ConfigMap(name, namespace)",
			u.GetKind(), u.GetName())
	}
	return nil
}
