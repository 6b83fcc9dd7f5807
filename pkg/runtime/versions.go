package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/cachefill"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/dispatch"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/lanes"
)

// VersionAnnotation names, on one object, the API version whose controller
// handles it when its kind has controllers in several versions
// (VersionDispatch). It wins over every other rule; a value that names no
// version with a controller is ignored.
//
//	kubectl annotate widget w opgen.dev/controller-version=v2
const VersionAnnotation = "opgen.dev/controller-version"

// VersionDispatch shares the objects of one kind between the controllers of
// several of its API versions, registered on one Operator, each watching its
// own version's endpoint (the API server converts). Each object is handled
// by exactly one of them, chosen when a worker takes its key:
//
//  1. the version VersionAnnotation names, if it has a controller;
//  2. with Written, the version the object was last written in: the
//     apiVersion of the newest metadata.managedFields entry that is not of
//     the status subresource and not by the operator's own field manager
//     (Options.Name), if that version has a controller and no other
//     version was written in the same second (managedFields times have
//     second precision: a tie is not a choice);
//  3. Default.
//
// The operator's own writes (status, finalizers) never move an object, so
// a controller does not hand an object away by handling it.
//
// # Guarantees
//
// The controllers of one VersionDispatch never handle an object at the same
// time (a per-key turn shared between them, held for the whole action), and
// once one handled it, another takes it only after a live read of the object
// (not the cache, which may lag behind the first one's) confirms the rule
// sends it there. A controller that is not chosen drops the key and forgets
// its memory of the object; the chosen one starts from
// status.observedGeneration, so a handed-over object gets Reconcile or
// Modify, not a second Add. The finalizer is shared (the default finalizer
// is per group), so the controller that owns an object when it is deleted
// runs its Delete.
//
// # Caveats
//
// Every version with a controller has its own informer and cache of every
// object of the kind. With Written, those caches keep the managedFields
// entries without their field sets (manager, operation, apiVersion, time,
// subresource), which handlers see in ObjectMeta. Who "wrote" an object is
// who last changed one of its fields: a write that changes nothing leaves
// managedFields, and the choice, as it was.
type VersionDispatch struct {
	// Versions are the API versions of the kind that have a controller.
	Versions []string
	// Written sends each object to the controller of the version it was
	// last written in (rule 2).
	Written bool
	// Default is the version whose controller handles the objects that no
	// other rule places. It must be one of Versions.
	Default string
}

// check reports a rule that cannot place objects on version.
func (d VersionDispatch) check(gk schema.GroupKind, version string) error {
	switch {
	case !slices.Contains(d.Versions, version):
		return fmt.Errorf("runtime.Register: %s %s: ControllerOptions.VersionDispatch.Versions (%s) lacks the controller's own version %s", gk, version, strings.Join(d.Versions, ", "), version)
	case !slices.Contains(d.Versions, d.Default):
		return fmt.Errorf("runtime.Register: %s %s: ControllerOptions.VersionDispatch.Default %q is not one of its Versions (%s)", gk, version, d.Default, strings.Join(d.Versions, ", "))
	}
	return nil
}

func (d VersionDispatch) equal(o VersionDispatch) bool {
	return d.Written == o.Written && d.Default == o.Default && slices.Equal(d.Versions, o.Versions)
}

// Version returns the version whose controller handles obj, for an
// operator whose field manager is manager.
func (d VersionDispatch) Version(obj metav1.Object, manager string) string {
	if v := obj.GetAnnotations()[VersionAnnotation]; slices.Contains(d.Versions, v) {
		return v
	}
	if d.Written {
		if v := writtenVersion(obj, manager); slices.Contains(d.Versions, v) {
			return v
		}
	}
	return d.Default
}

// writtenVersion is the version of the newest write to obj by another
// manager than manager, outside the status subresource, or "" when there is
// none or two versions tie.
func writtenVersion(obj metav1.Object, manager string) string {
	var newest metav1.Time
	version := ""
	for _, e := range obj.GetManagedFields() {
		if e.Subresource != "" || e.Manager == manager || e.Time == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(e.APIVersion)
		if err != nil {
			continue
		}
		switch {
		case newest.Before(e.Time):
			newest, version = *e.Time, gv.Version
		case newest.Equal(e.Time) && version != gv.Version:
			version = "" // the same second: which came last is unknown
		}
	}
	return version
}

// versionTurn is a controller's seat in its kind's dispatch group
// (ControllerOptions.VersionDispatch).
type versionTurn[T apis.Object] struct {
	group   *dispatch.Group[VersionDispatch]
	rule    VersionDispatch
	version string // the controller's
	manager string // the operator's field manager
	client  func(namespace string) plug.Client[T]
	objects *objects[T]
	states  *states
	queue   *lanes.Keys
	log     logr.Logger
}

// take decides whether this controller handles key under its
// VersionDispatch. When it does, it holds key's turn until release is
// called; when it does not, the controller forgets the object and the
// queue the key (or, when the live read failed, retries it with backoff).
func (v *versionTurn[T]) take(ctx context.Context, key cache.ObjectName) (release func(), mine bool) {
	release = v.group.Take(key)
	obj, ok := v.objects.get(key)
	if !ok {
		v.group.Forget(key)
		return release, true // gone: handle as without dispatch
	}
	mine = v.rule.Version(obj, v.manager) == v.version
	if last := v.group.Last(key); mine && last.UID == obj.GetUID() && last.Version != v.version {
		var err error
		if mine, err = v.confirm(ctx, key); err != nil {
			release()
			v.log.Error(err, "cannot read the object to confirm it moved to this version's controller; retrying with backoff", "namespace", key.Namespace, "name", key.Name)
			v.queue.Retry(key)
			return nil, false
		}
	}
	if !mine {
		release()
		v.states.forget(key)
		v.queue.Forget(key)
		return nil, false
	}
	v.group.Handled(key, dispatch.HandledBy{UID: obj.GetUID(), Version: v.version})
	return release, true
}

// confirm reads key from the API server, past this controller's cache,
// which may lag behind the one of the controller that handled it last,
// and reports whether the rule sends it to this controller's version.
func (v *versionTurn[T]) confirm(ctx context.Context, key cache.ObjectName) (bool, error) {
	live, err := v.client(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil // gone: the delete event forgets it
	case err != nil:
		return false, err
	}
	return v.rule.Version(live, v.manager) == v.version, nil
}

// dispatchTransform is the transform of a controller's own informers:
// the operator's with the controller's projection, except that with
// VersionDispatch.Written the managedFields entries stay, without their
// field sets.
func dispatchTransform(d *VersionDispatch, op *Operator, project func(any)) cache.TransformFunc {
	if d == nil || !d.Written || op.opts.KeepManagedFields {
		return op.opts.transform(project)
	}
	manager := op.opts.Name
	op.fillFilter.KeepHeads() // writtenVersion reads every entry's head
	return func(obj any) (any, error) { return cachefill.Trim(obj, manager, true, project) }
}

// dispatchFilter wraps the update filter so that an update that moves the
// object to another version's controller wakes it, whatever else changed.
func dispatchFilter[T apis.Object](filter func(oldObj, newObj T) bool, d VersionDispatch, manager string) func(oldObj, newObj T) bool {
	return func(oldObj, newObj T) bool {
		if d.Version(oldObj, manager) != d.Version(newObj, manager) {
			return true
		}
		if filter == nil {
			return GenerationOrMetadataChanged(oldObj, newObj)
		}
		return filter(oldObj, newObj)
	}
}
