package runtime

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/owned"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/ownwrites"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/shard"
)

// sharedCaches holds the informers of owned and watched kinds, shared by
// every controller of the operator: metadata-only, unless the operator's
// client-go factory already runs a full informer for the kind.
type sharedCaches struct {
	op      *Operator
	full    map[string]map[schema.GroupVersionKind]bool // by namespace: kinds with a full informer
	kinds   map[kindKey]*kindCache
	created []cache.SharedIndexInformer // to run
	all     []cache.SharedIndexInformer // to sync
	handled []cache.DoneChecker         // the event handlers, to sync (handle)
}

// kindKey names a kind's cache: a sharded member caches the owned kinds'
// objects of its share apart from the kinds it watches whole.
type kindKey struct {
	gvk     schema.GroupVersionKind
	sharded bool
}

// kindCache is the cache of one owned or watched kind.
type kindCache struct {
	gvk        schema.GroupVersionKind
	gvr        schema.GroupVersionResource
	namespaced bool
	sharded    bool                                 // only this member's share (shard.go)
	informers  map[string]cache.SharedIndexInformer // by namespace; "" = all
	// stores are the stores of owned objects of the controllers that own the
	// kind: a sharded member's dropped bucket leaves their memory.
	stores []*ownedStore
	// writes holds what the operator's applies of the kind returned, and
	// the UIDs it deleted, until the cache shows them (internal/ownwrites).
	writes *ownwrites.Writes[*unstructured.Unstructured]
	// owners indexes the metadata-only informers' objects by controller
	// owner (internal/owned); lean marks those informers. Full informers use
	// client-go's index instead.
	owners *owned.Index
	lean   map[cache.SharedIndexInformer]bool
}

func newSharedCaches(op *Operator) *sharedCaches {
	return &sharedCaches{op: op, full: map[string]map[schema.GroupVersionKind]bool{}, kinds: map[kindKey]*kindCache{}}
}

// kind returns the cache for gvk, creating its informers on first use;
// sharded, of the objects of this member's share only.
func (s *sharedCaches) kind(gvk schema.GroupVersionKind, sharded bool) (*kindCache, error) {
	if kc, ok := s.kinds[kindKey{gvk, sharded}]; ok {
		return kc, nil
	}
	mapping, err := s.op.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("runtime: kind %s is not served by the API server (%w): install its CRD, or fix the +opgen:controller:owns marker", markerKind(gvk), err)
	}
	kc := &kindCache{
		gvk:        gvk,
		gvr:        mapping.Resource,
		namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace,
		sharded:    sharded,
		informers:  map[string]cache.SharedIndexInformer{},
		writes:     s.op.owned.Of(mapping.Resource.GroupResource()),
		owners:     owned.NewIndex(),
		lean:       map[cache.SharedIndexInformer]bool{},
	}
	for _, ns := range s.op.opts.namespaces(kc.namespaced) {
		inf, err := s.informer(kc, ns)
		if err != nil {
			return nil, err
		}
		kc.informers[ns] = inf
		s.all = append(s.all, inf)
		if !sharded {
			s.op.seen.Add(kc.gvr.GroupResource(), ns, inf)
		}
	}
	s.kinds[kindKey{gvk, sharded}] = kc
	return kc, nil
}

// informer reuses the factory's full informer for the kind in ns, with
// client-go's controller-UID index, or makes a metadata-only one, indexed
// by kc.owners.
func (s *sharedCaches) informer(kc *kindCache, ns string) (cache.SharedIndexInformer, error) {
	if s.full[ns][kc.gvk] && !kc.sharded {
		// Only a factory of Informers has full kinds. Looked up, not
		// made: making one here would link client-go's every informer.
		s.op.mu.Lock()
		f := s.op.factories[ns]
		s.op.mu.Unlock()
		gi, err := f.ForResource(kc.gvr)
		if err == nil {
			inf := gi.Informer()
			return inf, owned.AddIndex(inf)
		}
	}
	var inf cache.SharedIndexInformer
	if kc.sharded {
		// An informer per bucket held; an owned object is in its
		// owner's bucket (shard.go).
		set := shard.NewInformers(func(b int) (cache.SharedIndexInformer, error) {
			return s.metadataInformer(kc, ns, s.op.sharding.keys.Selector(b))
		}, nil)
		set.Dropped = func(objs []any) {
			kc.owners.Drop(objs)
			for _, obj := range objs {
				if m, err := meta.Accessor(obj); err == nil {
					k := plug.ObjectKey{GVK: kc.gvk, Namespace: m.GetNamespace(), Name: m.GetName()}
					for _, st := range kc.stores {
						st.forget(k, m.GetUID())
					}
				}
			}
		}
		s.op.sharding.member.Register(set)
		inf = set
	} else {
		var err error
		if inf, err = s.metadataInformer(kc, ns, ""); err != nil {
			return nil, err
		}
	}
	if err := s.handle(inf, kc.owners.Handler()); err != nil {
		return nil, err
	}
	kc.lean[inf] = true
	s.created = append(s.created, inf)
	return inf, nil
}

// handle adds h to inf, and to what startCaches waits for: a handler has
// synced once it took every object of the initial list, so the workers
// start with every listed object queued, and a change made meanwhile is
// not behind the rest of the list in the informer's buffer (on a busy
// start of 10,000 objects that wait was 100 to 200 ms). A sharded set
// returns no registration; its buckets' stores sync as before.
func (s *sharedCaches) handle(inf cache.SharedIndexInformer, h cache.ResourceEventHandler) error {
	reg, err := inf.AddEventHandler(h)
	if reg != nil {
		s.handled = append(s.handled, reg.HasSyncedChecker())
	}
	return err
}

// metadataInformer makes a metadata-only informer of kc's objects in ns
// that match selector ("" for all).
func (s *sharedCaches) metadataInformer(kc *kindCache, ns, selector string) (cache.SharedIndexInformer, error) {
	var tweak metadatainformer.TweakListOptionsFunc
	if selector != "" {
		tweak = func(o *metav1.ListOptions) { o.LabelSelector = selector }
	}
	inf := metadatainformer.NewFilteredMetadataInformer(s.op.kube.Metadata, kc.gvr, ns, 0, cache.Indexers{}, tweak).Informer()
	return inf, inf.SetTransform(s.op.opts.transformOwned())
}

// markerKind spells gvk as the +opgen:controller:owns marker does:
// apps/v1.Deployment, v1.ConfigMap.
func markerKind(gvk schema.GroupVersionKind) string {
	return strings.TrimPrefix(gvk.GroupVersion().String()+"."+gvk.Kind, "/")
}
