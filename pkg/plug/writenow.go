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

	"github.com/opgen-sdk/opgen/apis"
)

// owned objects is what the imperative operations write through: the
// ApplyOwned step of the action's pipeline.
type nowWriter interface {
	apply(ctx context.Context, d OwnedObject) (*unstructured.Unstructured, error)
	create(ctx context.Context, d OwnedObject) (*unstructured.Unstructured, error)
	delete(ctx context.Context, obj metav1.Object, gvk schema.GroupVersionKind, propagation metav1.DeletionPropagation) error
}

func (a *Action[T]) nowWriter() (nowWriter, error) {
	if a.now == nil {
		return nil, fmt.Errorf("plug: the pipeline of %T has no ApplyOwned step, which writes owned objects", a.Object)
	}
	return a.now, nil
}

// ApplyNow applies obj now, owned by a.Object, as ApplyOwned
// applies a declared one, and returns what the API server answered. Use
// it when the handler must branch on the write; Own stays the default.
// The owned object counts as declared: the action's prune keeps it. The write is
// logged, counted and recorded as an Event on failure, like the step's.
func ApplyNow[T apis.Object, C runtime.Object](ctx context.Context, a *Action[T], obj C) (C, error) {
	return writeNow(ctx, a, obj, nowWriter.apply)
}

// CreateNow creates obj now, owned by a.Object, and returns what the
// API server answered; apierrors.IsAlreadyExists tells that it exists.
// For owned objects created once and never changed (a Job of a scheduled run).
// The owned object counts as declared, as with ApplyNow. AlreadyExists is an
// answer the handler branches on, not a failure: it records no Event (the
// handler records one with a.Warning when it is one); other failures
// record a Warning.
func CreateNow[T apis.Object, C runtime.Object](ctx context.Context, a *Action[T], obj C) (C, error) {
	return writeNow(ctx, a, obj, nowWriter.create)
}

func writeNow[T apis.Object, C runtime.Object](ctx context.Context, a *Action[T], obj C,
	write func(nowWriter, context.Context, OwnedObject) (*unstructured.Unstructured, error)) (C, error) {
	var zero C
	w, err := a.nowWriter()
	if err != nil {
		return zero, err
	}
	d := Object(obj)
	if bad, ok := d.(invalidOwned); ok {
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

// DeleteNow deletes obj, an object a.Object owns, now: only if its UID
// is still obj's, with propagation (metav1.DeletePropagationBackground
// when ""). An object already gone is no error. The delete is logged,
// counted and recorded as a Normal Event on a.Object.
//
// After CreateNow, ApplyNow or DeleteNow, the readers of the owned kind
// show the action's own writes at once: a created object is listed, a
// deleted one is not, before the cache catches up. An action in which
// one of them created or deleted an owned object is followed, once it succeeded,
// by one more action of the object at once, so a status computed from
// the owned objects converges whatever order the handler computed it in.
func DeleteNow[T apis.Object](ctx context.Context, a *Action[T], obj runtime.Object, propagation metav1.DeletionPropagation) error {
	w, err := a.nowWriter()
	if err != nil {
		return err
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return fmt.Errorf("plug: DeleteNow: %T has no metadata", obj)
	}
	gvk, err := kindOf(obj)
	if err != nil {
		return err
	}
	if propagation == "" {
		propagation = metav1.DeletePropagationBackground
	}
	return w.delete(ctx, m, gvk, propagation)
}

// nowOps writes the owned objects of one action through env's store.
type nowOps[T apis.Object] struct {
	env Env[T]
	a   *Action[T]
}

func (c nowOps[T]) apply(ctx context.Context, d OwnedObject) (*unstructured.Unstructured, error) {
	return c.write(ctx, d, "Apply", c.env.Owned.Apply)
}

func (c nowOps[T]) create(ctx context.Context, d OwnedObject) (*unstructured.Unstructured, error) {
	return c.write(ctx, d, "Create", c.env.Owned.Create)
}

func (c nowOps[T]) write(ctx context.Context, d OwnedObject, verb string,
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

func (c nowOps[T]) delete(ctx context.Context, obj metav1.Object, gvk schema.GroupVersionKind, propagation metav1.DeletionPropagation) error {
	k := ObjectKey{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if _, err := c.env.Owned.Namespaced(gvk); err != nil {
		return err
	}
	start := time.Now()
	err := c.env.Owned.Delete(withNow(ctx, c.a.Object.GetUID()), k, obj.GetUID(), propagation)
	logApply(ctx, gvk.Kind, k.Namespace, k.Name, applyResult(err, ApplyPruned), start)
	if err != nil {
		c.a.Warning("DeleteChildFailed", "delete %s %s: %v", gvk.Kind, k.Name, err)
		return err
	}
	c.a.AddEvent(Event{Type: corev1.EventTypeNormal, Reason: "DeletedChild", Action: "Delete", Note: fmt.Sprintf("deleted %s %s", gvk.Kind, k.Name)})
	return nil
}

// declareNow records an owned object written by ApplyNow or CreateNow: the
// action's prune keeps it.
func (a *Action[T]) declareNow(k ObjectKey) {
	if a.writtenNow == nil {
		a.writtenNow = map[ObjectKey]bool{}
	}
	a.writtenNow[k] = true
}

// nowKey marks the context of a OwnedStore call made by ApplyNow,
// CreateNow or DeleteNow; its value is the owner's UID.
type nowKey struct{}

func withNow(ctx context.Context, owner types.UID) context.Context {
	return context.WithValue(ctx, nowKey{}, owner)
}

// WrittenNow reports, to a OwnedStore, whether a call comes from
// ApplyNow, CreateNow or DeleteNow during a handler, rather than from the
// ApplyOwned step, and the UID of the owner whose action made it.
// The runtime's store handles the owner once more after an action whose
// calls created or deleted an owned object (see DeleteNow).
func WrittenNow(ctx context.Context) (owner types.UID, ok bool) {
	owner, ok = ctx.Value(nowKey{}).(types.UID)
	return owner, ok
}
