package plug

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/opgen-sdk/opgen/apis"
)

// AppliedHashAnnotation holds, on every owned object ApplyOwned
// applied, a hash of the body it applied. An apply whose hash the object
// already carries is skipped.
const AppliedHashAnnotation = "opgen.dev/applied-hash"

// ApplyOwned applies the owned objects the handler declared with
// a.Own, owned by a.Object, and prunes owned objects no longer declared.
//
// # Flow
//
// After the rest of the pipeline, when it succeeded, was not halted and the
// verb is not Delete:
//
//  1. Each owned object's kind must be one the controller owns
//     (ControllerOptions.Owns, from the +opgen:controller:owns marker),
//     else the action fails naming the marker to add. A namespaced
//     owned object without a namespace gets the owner's.
//  2. Its body is hashed: the JSON of the declaration, the owner's UID,
//     the namespace and the labels asked for with a.LabelOwned
//     (ManagedByLabel). When env.Owned reports that the cached
//     object carries that hash and nobody changed a field the operator
//     applied since its last apply, it is skipped: no decoding, no write.
//  3. Otherwise it is decoded, given a controller owner reference to
//     a.Object (blockOwnerDeletion set), the asked-for labels it does not
//     set itself and the annotation AppliedHashAnnotation, and applied
//     with server-side apply by env.FieldManager, force on.
//  4. Owned objects of the owned kinds whose controller is a.Object and
//     that were not declared are deleted, with a UID precondition.
//
// # Guarantees
//
// A steady state makes no writes: an unchanged declaration is skipped from
// the cache, and the operator's own write is not repeated while the cache
// catches up. An owned object changed by someone else in any field the
// operator applied (spec, data, a label, an annotation) is applied again
// on the next action, which that change triggers: the runtime's store
// compares the operator's managedFields entry with the field set of the
// body. It judges from the cache, not from memory, so a restart over
// converged owned objects writes nothing. Declaring nothing prunes every
// owned object. On a failed handler nothing is applied or pruned; on Delete
// nothing either: the garbage collector removes owned objects with their
// owner.
//
// # Caveats
//
// Every Add, Modify and Reconcile must declare the full set of
// owned objects, except of a retained kind (ControllerOptions.Retain, or
// SetPrunePolicy): those the action does not declare are kept, and the
// handler deletes old ones itself (DeleteNow). Fields others add (a label the declaration does not set)
// are left alone. Pruning sees only what the cache holds: an object created a
// moment ago by a previous action is pruned on the next action, which its
// own watch event triggers. Cluster-scoped owned objects of a namespaced
// owner are rejected by the API server.
func ApplyOwned[T apis.Object](env Env[T]) Step[T] {
	env = env.withOwned()
	return StepFunc[T](func(ctx context.Context, a *Action[T], next Next) error {
		if env.Owned != nil {
			a.now = nowOps[T]{env, a}
		}
		err := next(ctx)
		if err != nil || a.Halted() || a.Verb == Delete {
			return err
		}
		if env.Owned == nil {
			if len(a.owned) > 0 {
				return fmt.Errorf("plug: %s declared owned objects but the controller owns no kinds: add +opgen:controller:owns=<group/version.Kind> to the type", env.Controller)
			}
			return nil
		}
		return applyOwned(ctx, env, a)
	})
}

func applyOwned[T apis.Object](ctx context.Context, env Env[T], a *Action[T]) error {
	keep := make(map[ObjectKey]bool, len(a.owned)+len(a.writtenNow))
	for k := range a.writtenNow {
		keep[k] = true
	}
	for _, d := range a.owned {
		if bad, ok := d.(invalidOwned); ok {
			return bad.err
		}
		k, err := declaredKey(env, a.Object, d)
		if err != nil {
			return err
		}
		if keep[k] && !a.writtenNow[k] {
			return fmt.Errorf("plug: %s declared %s %s twice: declare each owned object once", env.Controller, k.GVK.Kind, k.Name)
		}
		keep[k] = true
		if err := applyOwnedObject(ctx, env, a, k, d); err != nil {
			return fmt.Errorf("apply %s %s/%s: %w", k.GVK.Kind, k.Namespace, k.Name, err)
		}
	}
	start := time.Now()
	n, err := env.Owned.Prune(ctx, a.Object.GetUID(), keep, func(gvk schema.GroupVersionKind) bool { return pruned(env, a, gvk) })
	if n > 0 || err != nil {
		logApply(ctx, "descendants", "", strconv.Itoa(n), applyResult(err, ApplyPruned), start)
	}
	return err
}

// declaredKey names d, with the owner's namespace when d is namespaced
// and has none.
func declaredKey[T apis.Object](env Env[T], owner T, d OwnedObject) (ObjectKey, error) {
	apiVersion, kind, name := deref(d.GetAPIVersion()), deref(d.GetKind()), deref(d.GetName())
	if apiVersion == "" || kind == "" || name == "" {
		return ObjectKey{}, fmt.Errorf("plug: %s declared an owned object (%T) without apiVersion, kind or name: build it with its apply configuration constructor, such as corev1ac.ConfigMap(name, namespace)", env.Controller, d)
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return ObjectKey{}, fmt.Errorf("plug: %s declared a %s with apiVersion %q: %w", env.Controller, kind, apiVersion, err)
	}
	k := ObjectKey{GVK: gv.WithKind(kind), Namespace: deref(d.GetNamespace()), Name: name}
	namespaced, err := env.Owned.Namespaced(k.GVK)
	if err != nil {
		return k, err
	}
	if namespaced && k.Namespace == "" {
		k.Namespace = owner.GetNamespace()
	}
	return k, nil
}

// applyOwnedObject applies d as k unless the store says its hash is there.
func applyOwnedObject[T apis.Object](ctx context.Context, env Env[T], a *Action[T], k ObjectKey, d OwnedObject) error {
	data, err := json.Marshal(d)
	if err != nil {
		return err
	}
	hash := hashOf(data, a.Object.GetUID(), k.Namespace, a.labels)
	start := time.Now()
	var u *unstructured.Unstructured
	body := func() (*unstructured.Unstructured, error) {
		if u == nil {
			u, err = appliedBody(env, a, k, data, hash)
		}
		return u, err
	}
	if env.Owned.Applied(k, hash, body) {
		logApply(ctx, k.GVK.Kind, k.Namespace, k.Name, ApplyUnchanged, start)
		return nil
	}
	if _, err := body(); err != nil {
		return err
	}
	_, err = env.Owned.Apply(ctx, u)
	logApply(ctx, k.GVK.Kind, k.Namespace, k.Name, applyResult(err, ApplyCreatedOrChanged), start)
	return err
}

// appliedBody is the body applied for the declaration data of k: owned by
// a.Object, with the labels asked for and the hash annotation.
func appliedBody[T apis.Object](env Env[T], a *Action[T], k ObjectKey, data []byte, hash string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	u.SetNamespace(k.Namespace)
	u.SetOwnerReferences([]metav1.OwnerReference{ownerReference(env, a.Object)})
	u.SetLabels(withDefaults(u.GetLabels(), a.labels))
	u.SetAnnotations(withDefaults(map[string]string{AppliedHashAnnotation: hash}, u.GetAnnotations()))
	return u, nil
}

// withDefaults returns m with the entries of defaults it lacks.
func withDefaults(m, defaults map[string]string) map[string]string {
	if len(defaults) == 0 {
		return m
	}
	if m == nil {
		m = make(map[string]string, len(defaults))
	}
	for k, v := range defaults {
		if _, set := m[k]; !set {
			m[k] = v
		}
	}
	return m
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

// hashOf hashes everything that makes up an applied body: the declared
// JSON (encoding/json writes struct fields in order and map keys sorted,
// so equal declarations hash alike), the owner, the namespace and the
// labels added to it.
func hashOf(declared []byte, owner types.UID, namespace string, labels map[string]string) string {
	h := sha256.New()
	h.Write(declared)
	h.Write([]byte{0})
	h.Write([]byte(owner))
	h.Write([]byte{0})
	h.Write([]byte(namespace))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		h.Write([]byte{0})
		h.Write([]byte(k))
		h.Write([]byte{'='})
		h.Write([]byte(labels[k]))
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:12])
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
