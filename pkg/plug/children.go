package plug

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/opgen-sdk/opgen/apis"
)

// PrunePolicy says what ApplyDescendants does with the owned objects of a
// kind that an action does not declare.
type PrunePolicy int

const (
	// PruneUndeclared deletes them: what the action declares is the whole
	// set. The default.
	PruneUndeclared PrunePolicy = iota
	// Retain keeps them. For children that accumulate (Jobs, backups,
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
func Object(obj runtime.Object) Descendant {
	u, err := toUnstructured(obj)
	if err != nil {
		return invalidDescendant{err}
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

// invalidDescendant carries the error of a declaration that could not be
// made; ApplyDescendants reports it.
type invalidDescendant struct{ err error }

func (invalidDescendant) IsApplyConfiguration()  {}
func (invalidDescendant) GetAPIVersion() *string { return nil }
func (invalidDescendant) GetKind() *string       { return nil }
func (invalidDescendant) GetName() *string       { return nil }
func (invalidDescendant) GetNamespace() *string  { return nil }
func (d invalidDescendant) MarshalJSON() ([]byte, error) {
	return nil, d.err
}

// children is what the imperative operations write through: the
// ApplyDescendants step of the action's pipeline.
type children interface {
	apply(ctx context.Context, d Descendant) (*unstructured.Unstructured, error)
	create(ctx context.Context, d Descendant) (*unstructured.Unstructured, error)
	delete(ctx context.Context, child metav1.Object, gvk schema.GroupVersionKind, propagation metav1.DeletionPropagation) error
}

func (a *Action[T]) childWriter() (children, error) {
	if a.children == nil {
		return nil, fmt.Errorf("plug: the pipeline of %T has no ApplyDescendants step, which writes children", a.Object)
	}
	return a.children, nil
}

// ApplyNow applies child now, owned by a.Object, as ApplyDescendants
// applies a declared one, and returns what the API server answered. Use
// it when the handler must branch on the write; Own stays the default.
// The child counts as declared: the action's prune keeps it. The write is
// logged, counted and recorded as an Event on failure, like the step's.
func ApplyNow[T apis.Object, C runtime.Object](ctx context.Context, a *Action[T], child C) (C, error) {
	return writeNow(ctx, a, child, children.apply)
}

// CreateNow creates child now, owned by a.Object, and returns what the
// API server answered; apierrors.IsAlreadyExists tells that it exists.
// For children created once and never changed (a Job of a scheduled run).
// The child counts as declared, as with ApplyNow. AlreadyExists is an
// answer the handler branches on, not a failure: it records no Event (the
// handler records one with a.Warning when it is one); other failures
// record a Warning.
func CreateNow[T apis.Object, C runtime.Object](ctx context.Context, a *Action[T], child C) (C, error) {
	return writeNow(ctx, a, child, children.create)
}

func writeNow[T apis.Object, C runtime.Object](ctx context.Context, a *Action[T], child C,
	write func(children, context.Context, Descendant) (*unstructured.Unstructured, error)) (C, error) {
	var zero C
	w, err := a.childWriter()
	if err != nil {
		return zero, err
	}
	d := Object(child)
	if bad, ok := d.(invalidDescendant); ok {
		return zero, bad.err
	}
	got, err := write(w, ctx, d)
	if err != nil {
		return zero, err
	}
	out := reflect.New(reflect.TypeFor[C]().Elem()).Interface().(C)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, out); err != nil {
		return zero, fmt.Errorf("plug: the server's answer as a %T: %w", out, err)
	}
	return out, nil
}

// DeleteNow deletes child, an object a.Object owns, now: only if its UID
// is still child's, with propagation (metav1.DeletePropagationBackground
// when ""). An object already gone is no error. The delete is logged,
// counted and recorded as a Normal Event on a.Object.
//
// After CreateNow, ApplyNow or DeleteNow, the readers of the owned kind
// show the action's own writes at once: a created child is listed, a
// deleted one is not, before the cache catches up. An action in which
// one of them created or deleted a child is followed, once it succeeded,
// by one more action of the object at once, so a status computed from
// the children converges whatever order the handler computed it in.
func DeleteNow[T apis.Object](ctx context.Context, a *Action[T], child runtime.Object, propagation metav1.DeletionPropagation) error {
	w, err := a.childWriter()
	if err != nil {
		return err
	}
	m, ok := child.(metav1.Object)
	if !ok {
		return fmt.Errorf("plug: DeleteNow: %T has no metadata", child)
	}
	gvk, err := kindOf(child)
	if err != nil {
		return err
	}
	if propagation == "" {
		propagation = metav1.DeletePropagationBackground
	}
	return w.delete(ctx, m, gvk, propagation)
}

// childOps writes the children of one action through env's store.
type childOps[T apis.Object] struct {
	env Env[T]
	a   *Action[T]
}

func (c childOps[T]) apply(ctx context.Context, d Descendant) (*unstructured.Unstructured, error) {
	return c.write(ctx, d, "Apply", c.env.Descendants.Apply)
}

func (c childOps[T]) create(ctx context.Context, d Descendant) (*unstructured.Unstructured, error) {
	return c.write(ctx, d, "Create", c.env.Descendants.Create)
}

func (c childOps[T]) write(ctx context.Context, d Descendant, verb string,
	write func(context.Context, *unstructured.Unstructured) (*unstructured.Unstructured, error)) (*unstructured.Unstructured, error) {
	k, err := declaredKey(c.env, c.a.Object, d)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	u, err := appliedBody(c.env, c.a, k, data, hashOf(data, c.a.Object.GetUID(), k.Namespace, c.a.labels))
	if err != nil {
		return nil, err
	}
	got, err := write(withNow(ctx, c.a.Object.GetUID()), u)
	logApply(ctx, k.GVK.Kind, k.Namespace, k.Name, applyResult(err, ApplyCreatedOrChanged), start)
	if err != nil {
		if verb != "Create" || !apierrors.IsAlreadyExists(err) {
			c.a.Warning(verb+"ChildFailed", "%s %s %s: %v", verb, k.GVK.Kind, k.Name, err)
		}
		return nil, err
	}
	c.a.declareNow(k)
	return got, nil
}

func (c childOps[T]) delete(ctx context.Context, child metav1.Object, gvk schema.GroupVersionKind, propagation metav1.DeletionPropagation) error {
	k := ObjectKey{GVK: gvk, Namespace: child.GetNamespace(), Name: child.GetName()}
	if _, err := c.env.Descendants.Namespaced(gvk); err != nil {
		return err
	}
	start := time.Now()
	err := c.env.Descendants.Delete(withNow(ctx, c.a.Object.GetUID()), k, child.GetUID(), propagation)
	logApply(ctx, gvk.Kind, k.Namespace, k.Name, applyResult(err, ApplyPruned), start)
	if err != nil {
		c.a.Warning("DeleteChildFailed", "delete %s %s: %v", gvk.Kind, k.Name, err)
		return err
	}
	c.a.AddEvent(Event{Type: corev1.EventTypeNormal, Reason: "DeletedChild", Action: "Delete", Note: fmt.Sprintf("deleted %s %s", gvk.Kind, k.Name)})
	return nil
}

// declareNow records a child written by ApplyNow or CreateNow: the
// action's prune keeps it.
func (a *Action[T]) declareNow(k ObjectKey) {
	if a.writtenNow == nil {
		a.writtenNow = map[ObjectKey]bool{}
	}
	a.writtenNow[k] = true
}

// nowKey marks the context of a DescendantStore call made by ApplyNow,
// CreateNow or DeleteNow; its value is the owner's UID.
type nowKey struct{}

func withNow(ctx context.Context, owner types.UID) context.Context {
	return context.WithValue(ctx, nowKey{}, owner)
}

// WrittenNow reports, to a DescendantStore, whether a call comes from
// ApplyNow, CreateNow or DeleteNow during a handler, rather than from the
// ApplyDescendants step, and the UID of the owner whose action made it.
// The runtime's store handles the owner once more after an action whose
// calls created or deleted a child (see DeleteNow).
func WrittenNow(ctx context.Context) (owner types.UID, ok bool) {
	owner, ok = ctx.Value(nowKey{}).(types.UID)
	return owner, ok
}
