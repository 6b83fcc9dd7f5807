package plug

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/opgen-sdk/opgen/apis"
)

// AppliedHashAnnotation holds, on every descendant ApplyDescendants
// applied, a hash of the body it applied. An apply whose hash the object
// already carries is skipped.
const AppliedHashAnnotation = "opgen.dev/applied-hash"

// ApplyDescendants applies the descendants the handler declared with
// a.Own, owned by a.Object, and prunes owned objects no longer declared.
//
// # Flow
//
// After the rest of the pipeline, when it succeeded, was not halted and the
// verb is not Delete:
//
//  1. Each descendant is converted to unstructured form; its kind must be
//     one the controller owns (ControllerOptions.Owns, from the
//     +opgen:controller:owns marker), else the action fails naming the
//     marker to add. A namespaced descendant without a namespace gets the
//     owner's.
//  2. It gets a controller owner reference to a.Object (blockOwnerDeletion
//     set) and the annotation AppliedHashAnnotation with a hash of the
//     body.
//  3. env.Descendants applies it with server-side apply by
//     env.FieldManager, force on, unless the cached object carries the
//     same hash and its generation did not move since the operator's last
//     apply.
//  4. Owned objects of the owned kinds whose controller is a.Object and
//     that were not declared are deleted, with a UID precondition.
//
// # Guarantees
//
// A steady state makes no writes: an unchanged declaration is skipped from
// the cache, and the operator's own write is not repeated while the cache
// catches up. A descendant changed by someone else in its spec (its
// generation moved) is applied again. Declaring nothing prunes every owned
// object. On a failed handler nothing is applied or pruned; on Delete
// nothing either: the garbage collector removes owned objects with their
// owner.
//
// # Caveats
//
// Every Add, Modify and Reconcile must declare the full set of
// descendants. Changes by others to labels, annotations, or fields of kinds
// without a generation (ConfigMap data) are not reverted until the declared
// body changes. Pruning sees only what the cache holds: an object created a
// moment ago by a previous action is pruned on the next action, which its
// own watch event triggers. Cluster-scoped descendants of a namespaced
// owner are rejected by the API server.
func ApplyDescendants[T apis.Object](env Env[T]) Step[T] {
	return StepFunc[T](func(ctx context.Context, a *Action[T], next Next) error {
		err := next(ctx)
		if err != nil || a.Halted() || a.Verb == Delete {
			return err
		}
		if env.Descendants == nil {
			if len(a.descendants) > 0 {
				return fmt.Errorf("plug: %s declared descendants but the controller owns no kinds: add +opgen:controller:owns=<group/version.Kind> to the type", env.Controller)
			}
			return nil
		}
		return applyDescendants(ctx, env, a)
	})
}

func applyDescendants[T apis.Object](ctx context.Context, env Env[T], a *Action[T]) error {
	owner := ownerReference(env, a.Object)
	keep := make(map[ObjectKey]bool, len(a.descendants))
	for _, d := range a.descendants {
		u, err := prepareDescendant(env, a.Object, owner, d)
		if err != nil {
			return err
		}
		k := ObjectKey{GVK: u.GroupVersionKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
		if keep[k] {
			return fmt.Errorf("plug: %s declared %s %s twice: declare each descendant once", env.Controller, k.GVK.Kind, k.Name)
		}
		keep[k] = true
		written, err := env.Descendants.Apply(ctx, u, u.GetAnnotations()[AppliedHashAnnotation])
		if err != nil {
			return fmt.Errorf("apply %s %s: %w", k.GVK.Kind, key(u), err)
		}
		if written {
			env.wrote("descendant")
		}
	}
	n, err := env.Descendants.Prune(ctx, a.Object.GetUID(), keep)
	for range n {
		env.wrote("prune")
	}
	return err
}

func ownerReference[T apis.Object](env Env[T], owner T) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{
		APIVersion:         env.GVK.GroupVersion().String(),
		Kind:               env.GVK.Kind,
		Name:               owner.GetName(),
		UID:                owner.GetUID(),
		Controller:         &yes,
		BlockOwnerDeletion: &yes,
	}
}

// prepareDescendant returns d as the object to apply: namespace defaulted,
// owner reference and hash annotation set.
func prepareDescendant[T apis.Object](env Env[T], owner T, ref metav1.OwnerReference, d Descendant) (*unstructured.Unstructured, error) {
	src, err := AsUnstructured(d)
	if err != nil {
		return nil, err
	}
	u := src.DeepCopy() // the handler may keep its descendant values
	namespaced, err := env.Descendants.Namespaced(u.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	if namespaced && u.GetNamespace() == "" {
		u.SetNamespace(owner.GetNamespace())
	}
	u.SetOwnerReferences([]metav1.OwnerReference{ref})
	annotations := u.GetAnnotations()
	delete(annotations, AppliedHashAnnotation)
	u.SetAnnotations(annotations)
	hash, err := hashOf(u)
	if err != nil {
		return nil, err
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AppliedHashAnnotation] = hash
	u.SetAnnotations(annotations)
	return u, nil
}

// hashOf hashes the JSON of u; encoding/json sorts map keys, so equal
// objects hash alike.
func hashOf(u *unstructured.Unstructured) (string, error) {
	data, err := json.Marshal(u.Object)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12]), nil
}
