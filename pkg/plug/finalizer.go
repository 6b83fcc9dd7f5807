package plug

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/opgen-sdk/opgen/apis"
)

// Finalizer keeps env.Finalizer on every object of a kind whose handler
// implements Deleter, and removes it once Delete succeeded.
//
// # Flow
//
//   - Add, Modify, Reconcile: when env.Deletes is true and the cached object
//     lacks the finalizer, it adds it with a server-side apply of
//     {metadata: {finalizers: [env.Finalizer]}} by env.FieldManager, before
//     the rest of the pipeline (so before the handler's first Add). A
//     failed apply fails the action, which is retried; when the object
//     was deleted or replaced since it was read, the action halts.
//   - Delete (the runtime picks it only while the finalizer is present):
//     it runs the rest of the pipeline; when that succeeded it removes the
//     finalizer, by applying an empty finalizer list (dropping only the
//     operator's entry) and, if another field manager also holds the
//     entry, by a JSON patch guarded by a test of the current list.
//
// # Guarantees
//
// An object created while the operator runs, or while it was down, gets
// the finalizer before its first Add, so its deletion waits for Delete to
// return nil, even when the object is deleted while the operator is
// stopped. Finalizers of others are never touched. Every write carries
// the object's UID, so a write from a stale read never creates the object
// again nor touches another one of the same name. The apply uses
// listType=set semantics, so it changes nothing but the one entry.
//
// # Caveats
//
// An object deleted before the operator first saw it has no finalizer and
// gets no Delete. One the operator saw but that was deleted before its
// finalizer was on it (it waited in a long queue) gets a late Delete with
// its last state when the watch reports the deletion; that one is not
// retried across a restart of the operator, since nothing holds it. The finalizer write wakes the controller once more (a
// finalizer change passes the enqueue filter); that action is a Reconcile
// and writes nothing. If Delete never succeeds the object stays
// Terminating: remove the finalizer by hand to give up.
func Finalizer[T apis.Object](env Env[T]) Step[T] {
	return StepFunc[T](func(ctx context.Context, a *Action[T], next Next) error {
		if a.Verb == Delete {
			if err := next(ctx); err != nil {
				return err
			}
			if !slices.Contains(a.Observed().GetFinalizers(), env.Finalizer) {
				return nil // a late Delete: the object went before it had one
			}
			return removeFinalizer(ctx, env, a.Observed())
		}
		if wasGone, err := AddFinalizer(ctx, env, a.Object); err != nil {
			return err
		} else if wasGone {
			// Deleted (or replaced) since it was read: nothing to do; the
			// cache will show it.
			a.Log.V(1).Info("not handled: the object was deleted meanwhile")
			a.Halt()
			return nil
		}
		return next(ctx)
	})
}

// AddFinalizer is the Finalizer step's first half on its own: when
// env.Deletes is true and obj is not being deleted and lacks
// env.Finalizer, it applies the finalizer (with obj's UID) and adds it to
// obj's list. The runtime calls it for a new object ahead of any other
// queued work, so that the object is protected before its first action
// waits its turn. wasGone reports that obj was deleted or replaced since
// it was read: nothing was written, and there is nothing to do.
func AddFinalizer[T apis.Object](ctx context.Context, env Env[T], obj T) (wasGone bool, err error) {
	if !env.Deletes || obj.GetDeletionTimestamp() != nil || slices.Contains(obj.GetFinalizers(), env.Finalizer) {
		return false, nil
	}
	if _, err := applyFinalizers(ctx, env, obj, []string{env.Finalizer}); err != nil {
		if gone(err) {
			return true, nil
		}
		return false, err
	}
	obj.SetFinalizers(append(obj.GetFinalizers(), env.Finalizer))
	return false, nil
}

// applyFinalizers makes env.FieldManager's set of finalizers on obj exactly
// finalizers, with server-side apply on the main resource.
func applyFinalizers[T apis.Object](ctx context.Context, env Env[T], obj T, finalizers []string) (T, error) {
	// The UID makes the apply fail instead of creating the object when it
	// was deleted meanwhile (409 "uid mismatch"), and when another object
	// of the same name replaced it (422, metadata.uid is immutable).
	meta := map[string]any{"name": obj.GetName(), "uid": obj.GetUID()}
	if obj.GetNamespace() != "" {
		meta["namespace"] = obj.GetNamespace()
	}
	if len(finalizers) > 0 {
		meta["finalizers"] = finalizers
	}
	body, err := json.Marshal(map[string]any{
		"apiVersion": env.GVK.GroupVersion().String(),
		"kind":       env.GVK.Kind,
		"metadata":   meta,
	})
	if err != nil {
		var zero T
		return zero, err
	}
	force := true
	got, err := env.Client(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: env.FieldManager, Force: &force})
	if err != nil {
		return got, fmt.Errorf("apply finalizer %s to %s: %w%s", env.Finalizer, key(obj), err, hint(err, ""))
	}
	return got, nil
}

// gone reports whether err says the object a write meant to change (by its
// UID) no longer exists: NotFound, the apply's "uid mismatch" conflict when
// nothing is there, or the immutable-UID rejection when another object of
// the same name replaced it.
func gone(err error) bool {
	if apierrors.IsNotFound(err) {
		return true
	}
	if apierrors.IsConflict(err) && strings.Contains(err.Error(), "uid mismatch") {
		return true
	}
	if !apierrors.IsInvalid(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == "metadata.uid" {
			return true
		}
	}
	return false
}

// hint names the RBAC rule to add when err is a Forbidden, and nothing
// otherwise: the error itself names the cause.
func hint(err error, subresource string) string {
	if !apierrors.IsForbidden(err) {
		return ""
	}
	if subresource != "" {
		return " (the operator needs the patch verb on the " + subresource + " subresource)"
	}
	return " (the operator needs the patch verb on the kind)"
}

func removeFinalizer[T apis.Object](ctx context.Context, env Env[T], obj T) error {
	// Applying no finalizers drops the operator's ownership of its entry,
	// which removes it unless another manager holds it too.
	got, err := applyFinalizers(ctx, env, obj, nil)
	if err != nil {
		if gone(err) {
			return nil
		}
		return err
	}
	rest := slices.DeleteFunc(slices.Clone(got.GetFinalizers()), func(f string) bool { return f == env.Finalizer })
	if len(rest) == len(got.GetFinalizers()) {
		return nil
	}
	// Another field manager holds the same entry (the object was created
	// with it): take it out of the list as it is now.
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": obj.GetUID()},
		{"op": "test", "path": "/metadata/finalizers", "value": got.GetFinalizers()},
		{"op": "replace", "path": "/metadata/finalizers", "value": rest},
	})
	if err != nil {
		return err
	}
	_, err = env.Client(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: env.FieldManager})
	if err != nil {
		if gone(err) {
			return nil
		}
		return fmt.Errorf("remove finalizer %s from %s: %w%s", env.Finalizer, key(obj), err, hint(err, ""))
	}
	return nil
}

func key(obj metav1.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
