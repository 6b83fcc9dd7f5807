package external

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/opgen-sdk/opgen/apis"
)

// K8s is a Reconciler over Kubernetes objects that an object owns: the
// same phases as for an external system, with the cluster as the system.
// It is operator-sdk-extra's K8sPhaseReconciler with StdK8sReconciler's
// standard phases:
//
//	Configure  Desired(obj) builds the owned objects (shared data: *Owned)
//	Read       gets each owned object from the API server
//	Diff       NeedCreate when none exists, NeedUpdate when one is missing or
//	           lacks a field or value Desired sets, naming each
//	Create     applies every owned object (server-side apply, owned by obj)
//	Update     the same
//	Delete     deletes the owned objects that exist
//
// Run it with New like any Reconciler. For owned objects that only need to be
// applied and pruned, a handler's a.Own with the ApplyOwned step is
// shorter; K8s is for porting phase-based code and for owned objects whose
// drift must be named in events.
type K8s[T apis.Object] struct {
	// Desired returns the owned objects obj asks for, each with apiVersion,
	// kind, name and (for namespaced kinds) namespace. Required.
	Desired func(ctx context.Context, obj T) ([]*unstructured.Unstructured, error)
	// FieldManager is the server-side apply field manager, the operator's
	// name. Required.
	FieldManager string

	client dynamic.Interface
	mapper meta.RESTMapper
}

// NewK8s returns a K8s reconciler that talks to the API server with cfg.
func NewK8s[T apis.Object](cfg *rest.Config, fieldManager string, desired func(ctx context.Context, obj T) ([]*unstructured.Unstructured, error)) (*K8s[T], error) {
	if desired == nil || fieldManager == "" {
		return nil, errors.New("external.NewK8s: give the Desired function and the field manager (the operator's name)")
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("external.NewK8s: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("external.NewK8s: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	return &K8s[T]{Desired: desired, FieldManager: fieldManager, client: client, mapper: mapper}, nil
}

// Owned is the K8s phases' shared data: the owned objects Desired
// built.
type Owned struct {
	Desired []*unstructured.Unstructured
}

// Live is what Read found: for each desired owned object, in the same order, the
// live one (nil where it does not exist).
type Live struct {
	Desired []*unstructured.Unstructured
	Objects []*unstructured.Unstructured
}

var _ Reconciler[*metav1.PartialObjectMetadata, *Owned, Live] = (*K8s[*metav1.PartialObjectMetadata])(nil)

// Configure builds the owned objects and makes obj their controller.
func (k *K8s[T]) Configure(ctx context.Context, obj T) (*Owned, error) {
	desired, err := k.Desired(ctx, obj)
	if err != nil {
		return nil, err
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		return nil, errors.New("external.K8s: the object has no apiVersion and kind; keep the AddMissingGVK step in the pipeline")
	}
	owner := metav1.NewControllerRef(obj, gvk)
	c := &Owned{}
	for _, d := range desired {
		data, err := d.MarshalJSON() // a copy, with JSON's number types, to compare with the live object
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		u.SetOwnerReferences([]metav1.OwnerReference{*owner})
		c.Desired = append(c.Desired, u)
	}
	return c, nil
}

// Read gets every owned object; found is true when any exists.
func (k *K8s[T]) Read(ctx context.Context, c *Owned, _ T) (Live, bool, error) {
	live := Live{Desired: c.Desired, Objects: make([]*unstructured.Unstructured, len(c.Desired))}
	found := false
	for i, d := range c.Desired {
		ri, err := k.resource(d)
		if err != nil {
			return Live{}, false, err
		}
		u, err := ri.Get(ctx, d.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return Live{}, false, fmt.Errorf("get %s %s: %w", d.GetKind(), d.GetName(), err)
		default:
			live.Objects[i], found = u, true
		}
	}
	return live, found, nil
}

// Diff names every owned object that is missing or lacks what Desired sets.
func (k *K8s[T]) Diff(_ T, live Live) Diff {
	var d Diff
	for i, want := range live.Desired {
		name := want.GetKind() + " " + want.GetName()
		switch got := live.Objects[i]; {
		case got == nil:
			d.NeedUpdate = true
			d.Changes = append(d.Changes, name+" is missing")
		case !contains(got.Object, want.Object, true):
			d.NeedUpdate = true
			d.Changes = append(d.Changes, name+" differs")
		}
	}
	return d
}

// Create applies every owned object.
func (k *K8s[T]) Create(ctx context.Context, c *Owned, _ T) (Result, error) {
	return Done(), k.apply(ctx, c)
}

// Update applies every owned object.
func (k *K8s[T]) Update(ctx context.Context, c *Owned, _ T, _ Live) (Result, error) {
	return Done(), k.apply(ctx, c)
}

// Delete deletes the owned objects that exist, each with its UID as a
// precondition, so an owned object made anew meanwhile is not deleted.
func (k *K8s[T]) Delete(ctx context.Context, c *Owned, _ T, live Live) (Result, error) {
	for _, u := range live.Objects {
		if u == nil {
			continue
		}
		ri, err := k.resource(u)
		if err != nil {
			return Done(), err
		}
		uid := u.GetUID()
		err = ri.Delete(ctx, u.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return Done(), fmt.Errorf("delete %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return Done(), nil
}

func (k *K8s[T]) apply(ctx context.Context, c *Owned) error {
	for _, d := range c.Desired {
		ri, err := k.resource(d)
		if err != nil {
			return err
		}
		if _, err := ri.Apply(ctx, d.GetName(), d, metav1.ApplyOptions{FieldManager: k.FieldManager, Force: true}); err != nil {
			return fmt.Errorf("apply %s %s: %w", d.GetKind(), d.GetName(), err)
		}
	}
	return nil
}

func (k *K8s[T]) resource(u *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := u.GroupVersionKind()
	m, err := k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("external.K8s: no resource for %s (is its CRD installed?): %w", gvk, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return k.client.Resource(m.Resource).Namespace(u.GetNamespace()), nil
	}
	return k.client.Resource(m.Resource), nil
}

// contains reports whether got has every field and value of want; at the
// top level metadata is compared by labels, annotations and owner
// references only (the server adds the rest).
func contains(got, want any, top bool) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for key, wv := range w {
			if top && (key == "metadata" || key == "status") {
				continue
			}
			if !contains(g[key], wv, false) {
				return false
			}
		}
		if top {
			return contains(metadataOf(g), metadataOf(w), false)
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !contains(g[i], w[i], false) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(got, want)
}

func metadataOf(obj map[string]any) map[string]any {
	md, _ := obj["metadata"].(map[string]any)
	out := map[string]any{}
	for _, key := range []string{"labels", "annotations"} {
		if v, ok := md[key]; ok {
			out[key] = v
		}
	}
	return out
}

// Children is the K8s phases' shared data.
//
// Deprecated: use Owned.
type Children = Owned
