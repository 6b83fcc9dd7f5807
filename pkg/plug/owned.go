package plug

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/opgen-sdk/opgen/apis"
)

// Declaring owned objects: what Action.Own takes, and what the
// ApplyOwned step does with the owned objects of a kind that an action
// does not declare.

// PrunePolicy says what ApplyOwned does with the owned objects of a
// kind that an action does not declare.
type PrunePolicy int

const (
	// PruneUndeclared deletes them: what the action declares is the whole
	// set. The default.
	PruneUndeclared PrunePolicy = iota
	// Retain keeps them. For owned objects that accumulate (Jobs, backups,
	// reports): the action declares or creates the one it wants now, and
	// deletes old ones itself (DeleteNow). The garbage collector removes
	// them all with their owner.
	Retain
)

// SetPrunePolicy sets, for this action, what happens to the undeclared
// owned objects of gvk; by default the controller's (Env.Retain).
func (a *Action[T]) SetPrunePolicy(gvk schema.GroupVersionKind, p PrunePolicy) {
	if a.prune == nil {
		a.prune = map[schema.GroupVersionKind]PrunePolicy{}
	}
	a.prune[gvk] = p
}

// pruned reports whether the undeclared owned objects of gvk are deleted.
func pruned[T apis.Object](env Env[T], a *Action[T], gvk schema.GroupVersionKind) bool {
	if p, ok := a.prune[gvk]; ok {
		return p == PruneUndeclared
	}
	for _, r := range env.Retain {
		if r == gvk {
			return false
		}
	}
	return true
}

// Object makes a typed object, such as a *batchv1.Job, a declaration for
// Action.Own. The object's Go type must be registered in client-go's
// scheme, or set its apiVersion and kind (TypeMeta).
//
// The declaration holds every field the object's JSON holds, so the
// operator owns each of them, zero values of fields without omitempty
// included; JSON nulls (such as an unset creationTimestamp) and the
// status are left out. An apply configuration owns only the fields it
// sets: prefer one when others share the object's fields.
func Object(obj runtime.Object) OwnedObject {
	u, err := toUnstructured(obj)
	if err != nil {
		return invalidOwned{err}
	}
	return Unstructured(u)
}

// toUnstructured turns a typed object into a declaration: its JSON without
// nulls or status, with apiVersion and kind.
func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	gvk, err := kindOf(obj)
	if err != nil {
		return nil, err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("plug: %T as a declaration: %w", obj, err)
	}
	delete(m, "status")
	dropNulls(m)
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// kindOf is obj's kind: its TypeMeta, else client-go's scheme's.
func kindOf(obj runtime.Object) (schema.GroupVersionKind, error) {
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		return gvk, nil
	}
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return schema.GroupVersionKind{}, fmt.Errorf("plug: the kind of %T is unknown: set its apiVersion and kind (TypeMeta)", obj)
	}
	return gvks[0], nil
}

// dropNulls removes JSON nulls and the empty maps they leave from m.
func dropNulls(m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			dropNulls(x)
			if len(x) == 0 {
				delete(m, k)
			}
		case []any:
			for _, e := range x {
				if em, ok := e.(map[string]any); ok {
					dropNulls(em)
				}
			}
		}
	}
}

// invalidOwned carries the error of a declaration that could not be
// made; ApplyOwned reports it.
type invalidOwned struct{ err error }

func (invalidOwned) IsApplyConfiguration()  {}
func (invalidOwned) GetAPIVersion() *string { return nil }
func (invalidOwned) GetKind() *string       { return nil }
func (invalidOwned) GetName() *string       { return nil }
func (invalidOwned) GetNamespace() *string  { return nil }
func (d invalidOwned) MarshalJSON() ([]byte, error) {
	return nil, d.err
}

// Unstructured wraps an unstructured object as an OwnedObject, for objects
// built without an apply configuration (and for steps that rewrite
// owned objects, such as ManagedByLabel).
func Unstructured(u *unstructured.Unstructured) OwnedObject { return unstructuredOwned{u} }

type unstructuredOwned struct{ u *unstructured.Unstructured }

func (unstructuredOwned) IsApplyConfiguration() {}

func (d unstructuredOwned) GetAPIVersion() *string { return strPtr(d.u.GetAPIVersion()) }
func (d unstructuredOwned) GetKind() *string       { return strPtr(d.u.GetKind()) }
func (d unstructuredOwned) GetName() *string       { return strPtr(d.u.GetName()) }
func (d unstructuredOwned) GetNamespace() *string  { return strPtr(d.u.GetNamespace()) }

// MarshalJSON makes the wrapper encode as the object it wraps.
func (d unstructuredOwned) MarshalJSON() ([]byte, error) { return d.u.MarshalJSON() }

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// AsUnstructured returns d as an unstructured object: the object itself for
// one made by Unstructured, otherwise the JSON of the apply configuration
// decoded. It fails when d has no apiVersion, kind or name.
func AsUnstructured(d OwnedObject) (*unstructured.Unstructured, error) {
	if w, ok := d.(unstructuredOwned); ok {
		return w.u, checkIdentity(w.u)
	}
	data, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encode owned object %T: %w", d, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("decode owned object %T: %w (set its apiVersion and kind: apply configurations built with their constructor, such as appsv1ac.Deployment(name, ns), have them)", d, err)
	}
	return u, checkIdentity(u)
}

func checkIdentity(u *unstructured.Unstructured) error {
	if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
		return fmt.Errorf("owned object %s %q lacks apiVersion, kind or name: build it with its apply configuration constructor, such as corev1ac.ConfigMap(name, namespace)",
			u.GetKind(), u.GetName())
	}
	return nil
}
