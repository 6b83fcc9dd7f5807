package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// The labels and annotation by which an owned object in one cluster names its
// owner in another. They are the record of what an owner declared: it
// survives a restart of the operator, and Owned.Delete finds the
// owned objects by it.
const (
	OwnerUIDLabel     = "fleet.opgen.dev/owner-uid"
	OwnerClusterLabel = "fleet.opgen.dev/owner-cluster"
	OwnerAnnotation   = "fleet.opgen.dev/owner"
	ownedFieldSuffix  = "-fleet"
)

// OwnedObject is an object an owner declares in a cluster of the fleet,
// possibly another than its own.
type OwnedObject struct {
	// Cluster is the member cluster the object is in, as the provider
	// names it (or Options.HomeCluster).
	Cluster string
	// Object is the owned object: an *unstructured.Unstructured, or a typed
	// object of client-go's scheme or with its TypeMeta set.
	Object k8sruntime.Object
}

// Owned keeps the objects that owners declare in other clusters of the
// fleet. There are no owner references across clusters, so the garbage
// collector cannot remove such owned objects when their owner goes (the
// question of controller-runtime #745); Owned does, through the
// owner's finalizer.
//
// The controller of the owners calls Declare from its handler with every
// owned object an owner has, each time (level-based: what it no longer declares
// is deleted), and Delete from its Delete method (plug.Deleter), so that
// the runtime keeps a finalizer on the owners: an owner deleted while
// the operator is down waits for it, and Delete runs after the restart.
// Each owned object carries OwnerUIDLabel, OwnerClusterLabel and
// OwnerAnnotation, the record by which Declare and Delete find it in
// every cluster. A cluster that the provider no longer knows is out of
// reach: its owned objects stay, and Delete does not wait for them.
//
// Owned objects are written by server-side apply with the operator's name and
// "-fleet" as field manager, and only when the live object lacks what
// was declared: a steady state writes nothing. They are read at each
// Declare, not watched: a change someone else made to an owned object is undone
// at the owner's next reconcile (its period).
type Owned struct {
	fleet *Fleet
	kinds []schema.GroupVersionKind

	mu      sync.Mutex
	clients map[string]*remote // by cluster
}

// remote is a cluster's clients, built from the config its provider
// gave; built again when that config changes.
type remote struct {
	cfg    *rest.Config
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// NewOwned returns the keeper of the owned objects of one controller's
// owners, of the given kinds: Declare refuses an owned object of another kind,
// and Delete looks for these kinds only.
func (f *Fleet) NewOwned(kinds ...schema.GroupVersionKind) *Owned {
	return &Owned{fleet: f, kinds: kinds, clients: map[string]*remote{}}
}

// Declare makes the owned objects of owner, which is in cluster ownerCluster
// (plug.Action.Cluster), what objs says: each is applied where it
// lacks what was declared, and the owned objects of owner that are no longer
// declared are deleted, in every cluster the fleet knows. An error
// (a cluster out of reach) leaves the rest done; the action retries.
func (c *Owned) Declare(ctx context.Context, ownerCluster string, owner metav1.Object, objs ...OwnedObject) error {
	keep := map[string]bool{}
	var errs []error
	for _, ch := range objs {
		u, err := c.toUnstructured(ch.Object)
		if err != nil {
			return err
		}
		label(u, ownerCluster, owner)
		keep[ownedKey(ch.Cluster, u)] = true
		if err := c.apply(ctx, ch.Cluster, u); err != nil {
			errs = append(errs, fmt.Errorf("apply %s %s in cluster %s: %w", u.GetKind(), objectName(u), ch.Cluster, err))
		}
	}
	errs = append(errs, c.prune(ctx, owner, keep)...)
	return errors.Join(errs...)
}

// Delete deletes every owned object of owner, in every cluster the fleet knows;
// call it from the owner's Delete. It returns an error while an owned object could
// not be deleted, so that the finalizer stays and the action retries.
func (c *Owned) Delete(ctx context.Context, owner metav1.Object) error {
	return errors.Join(c.prune(ctx, owner, nil)...)
}

// toUnstructured returns obj as an unstructured object with its kind.
func (c *Owned) toUnstructured(obj k8sruntime.Object) (*unstructured.Unstructured, error) {
	var u *unstructured.Unstructured
	if uo, ok := obj.(*unstructured.Unstructured); ok {
		u = uo.DeepCopy()
	} else {
		m, err := k8sruntime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("fleet.Owned: %T: %w", obj, err)
		}
		u = &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" {
			gvks, _, err := scheme.Scheme.ObjectKinds(obj)
			if err != nil || len(gvks) == 0 {
				return nil, fmt.Errorf("fleet.Owned: the kind of a %T is unknown: set its TypeMeta (APIVersion and Kind)", obj)
			}
			u.SetGroupVersionKind(gvks[0])
		}
	}
	gvk := u.GroupVersionKind()
	for _, k := range c.kinds {
		if k == gvk {
			unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
			unstructured.RemoveNestedField(u.Object, "status")
			return u, nil
		}
	}
	return nil, fmt.Errorf("fleet.Owned: an owned object of kind %s was declared, but the Owned were made for %v: add it to NewOwned's kinds, so that Delete finds such owned objects", gvk, c.kinds)
}

// label records owner on u.
func label(u *unstructured.Unstructured, ownerCluster string, owner metav1.Object) {
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[OwnerUIDLabel] = string(owner.GetUID())
	labels[OwnerClusterLabel] = ownerCluster
	u.SetLabels(labels)
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[OwnerAnnotation] = ownerCluster + "/" + objectName(owner)
	u.SetAnnotations(annotations)
}

func objectName(o metav1.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

func ownedKey(cluster string, u *unstructured.Unstructured) string {
	return cluster + "|" + u.GroupVersionKind().GroupKind().String() + "|" + objectName(u)
}

// apply writes u in cluster unless the live object already holds it.
func (c *Owned) apply(ctx context.Context, cluster string, u *unstructured.Unstructured) error {
	r, err := c.remote(cluster)
	if err != nil {
		return err
	}
	res, err := r.resource(u.GroupVersionKind(), u.GetNamespace())
	if err != nil {
		return err
	}
	live, err := res.Get(ctx, u.GetName(), metav1.GetOptions{})
	switch {
	case err == nil && contains(live.Object, u.Object):
		return nil
	case err != nil && !apierrors.IsNotFound(err):
		return err
	}
	body, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	force := true
	_, err = res.Patch(ctx, u.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: c.fieldManager(), Force: &force})
	return err
}

func (c *Owned) fieldManager() string { return c.fleet.home.Options().Name + ownedFieldSuffix }

// prune deletes the owned objects of owner that keep lacks, in every cluster
// the fleet knows.
func (c *Owned) prune(ctx context.Context, owner metav1.Object, keep map[string]bool) []error {
	uid := owner.GetUID()
	if uid == "" {
		return []error{errors.New("fleet.Owned: the owner has no UID: pass the object the action holds")}
	}
	selector := OwnerUIDLabel + "=" + string(uid)
	var errs []error
	for _, cluster := range c.fleet.knownNames() {
		namespaces := c.fleet.namespacesOf(cluster)
		if len(namespaces) == 0 {
			namespaces = []string{metav1.NamespaceAll}
		}
		r, err := c.remote(cluster)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, gvk := range c.kinds {
			for _, ns := range namespaces {
				res, err := r.resource(gvk, ns)
				if err != nil {
					errs = append(errs, fmt.Errorf("cluster %s: %w", cluster, err))
					continue
				}
				list, err := res.List(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: "0"})
				if err != nil {
					errs = append(errs, fmt.Errorf("list the owned objects %s in cluster %s: %w", gvk.Kind, cluster, err))
					continue
				}
				for i := range list.Items {
					item := &list.Items[i]
					if keep[ownedKey(cluster, item)] || item.GetDeletionTimestamp() != nil {
						continue
					}
					itemRes, err := r.resource(gvk, item.GetNamespace())
					if err != nil {
						errs = append(errs, err)
						continue
					}
					itemUID := item.GetUID()
					err = itemRes.Delete(ctx, item.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &itemUID}})
					if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
						errs = append(errs, fmt.Errorf("delete the owned object %s %s in cluster %s: %w", gvk.Kind, objectName(item), cluster, err))
					}
				}
			}
		}
	}
	return errs
}

// remote returns the clients of cluster, built again when its config
// changed.
func (c *Owned) remote(cluster string) (*remote, error) {
	cfg, _, ok := c.fleet.lookup(cluster)
	if !ok {
		c.mu.Lock()
		delete(c.clients, cluster)
		c.mu.Unlock()
		return nil, fmt.Errorf("fleet.Owned: the fleet knows no cluster %q (known: %v)", cluster, c.fleet.knownNames())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.clients[cluster]; r != nil && r.cfg == cfg {
		return r, nil
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	r := &remote{cfg: cfg, dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
	c.clients[cluster] = r
	return r, nil
}

// resource returns the client of gvk's resource in namespace ns (none
// for a cluster-scoped kind).
func (r *remote) resource(gvk schema.GroupVersionKind, ns string) (dynamic.ResourceInterface, error) {
	m, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) { // a CRD installed since discovery was read
		r.mapper.Reset()
		m, err = r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("map %s to its resource: %w", gvk, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameRoot {
		return r.dyn.Resource(m.Resource), nil
	}
	return r.dyn.Resource(m.Resource).Namespace(ns), nil
}

// contains reports whether live holds every field of want with its value
// (lists whole).
func contains(live, want map[string]any) bool {
	for k, w := range want {
		l, ok := live[k]
		if !ok {
			return false
		}
		wm, wIsMap := w.(map[string]any)
		lm, lIsMap := l.(map[string]any)
		switch {
		case wIsMap && lIsMap:
			if !contains(lm, wm) {
				return false
			}
		case !reflect.DeepEqual(l, w) && !reflect.DeepEqual(normalize(l), normalize(w)):
			return false
		}
	}
	return true
}

// normalize makes numbers compare alike, whatever decoded them (an int
// and an int64 of a hand-built owned object); only values that differ as they
// are pay for it.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// Child is an object an owner declares in a cluster of the fleet.
//
// Deprecated: use OwnedObject.
type Child = OwnedObject

// Children keeps the objects that owners declare in other clusters.
//
// Deprecated: use Owned.
type Children = Owned

// NewChildren returns the keeper of the owned objects of one controller's
// owners, of the given kinds.
//
// Deprecated: use Fleet.NewOwned.
func (f *Fleet) NewChildren(kinds ...schema.GroupVersionKind) *Owned { return f.NewOwned(kinds...) }
