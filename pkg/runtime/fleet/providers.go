package fleet

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"

	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// NamespacedEngager is an Engager that can engage a cluster in some
// namespaces only; *Fleet is one. Namespaces needs it.
type NamespacedEngager interface {
	Engager
	// EngageIn is Engage for a cluster whose operator works in
	// namespaces only.
	EngageIn(name string, cfg *rest.Config, namespaces ...string)
}

// DefaultTenantLabel marks the namespaces that Namespaces makes clusters.
const DefaultTenantLabel = "opgen.dev/tenant"

// Namespaces makes each namespace of the home cluster that Selector
// selects a cluster of its own, named after the namespace: its operator
// works in that namespace only, with the home cluster's config. It serves
// tests (a fleet on one control plane) and tenancy in one cluster, where
// each tenant's namespace gets its own caches, queues and metrics. A
// namespace that loses the label, or goes, is disengaged. The operator
// needs list and watch on namespaces.
type Namespaces struct {
	// Selector is a label selector of the namespaces. Default
	// DefaultTenantLabel (the label present, whatever its value).
	Selector string
}

// Run watches the namespaces until ctx ends.
func (n Namespaces) Run(ctx context.Context, home *runtime.Operator, e Engager) error {
	ne, ok := e.(NamespacedEngager)
	if !ok {
		return fmt.Errorf("fleet.Namespaces: %T cannot engage a cluster in one namespace (it lacks EngageIn)", e)
	}
	selector := orDefault(n.Selector, DefaultTenantLabel)
	cfg := home.RESTConfig()
	factory := informers.NewSharedInformerFactoryWithOptions(home.Clientset(), 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	inf := factory.Core().V1().Namespaces().Informer()
	var (
		mu      sync.Mutex
		engaged = map[string]bool{}
	)
	put := func(obj any) {
		ns, ok := obj.(*corev1.Namespace)
		if !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if ns.DeletionTimestamp != nil {
			if engaged[ns.Name] {
				delete(engaged, ns.Name)
				e.Disengage(ns.Name)
			}
			return
		}
		if !engaged[ns.Name] {
			engaged[ns.Name] = true
			ne.EngageIn(ns.Name, cfg, ns.Name)
		}
	}
	drop := func(obj any) {
		ns, ok := deleted[*corev1.Namespace](obj)
		if !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if engaged[ns.Name] {
			delete(engaged, ns.Name)
			e.Disengage(ns.Name)
		}
	}
	return runInformer(ctx, inf, put, drop)
}

// Multi runs several providers at once, each under a prefix: the cluster
// name a provider calls "east" is "<prefix>-east" in the fleet, so that
// two providers never name one cluster. It stops when ctx ends or a
// provider fails.
type Multi map[string]Provider

// Run runs every provider until ctx ends or one fails.
func (m Multi) Run(ctx context.Context, home *runtime.Operator, e Engager) error {
	if len(m) == 0 {
		return errors.New("fleet.Multi: no providers")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(m))
	for _, prefix := range slices.Sorted(maps.Keys(m)) {
		if err := checkName(prefix); err != nil {
			return fmt.Errorf("fleet.Multi: the prefix %q: %w", prefix, err)
		}
		go func() {
			err := m[prefix].Run(ctx, home, prefixed{prefix: prefix, e: e})
			if err != nil {
				err = fmt.Errorf("fleet.Multi: the provider %q: %w", prefix, err)
			}
			errs <- err
		}()
	}
	var all []error
	for range m {
		if err := <-errs; err != nil {
			all = append(all, err)
			cancel()
		}
	}
	if ctx.Err() != nil && len(all) == 0 {
		return nil
	}
	return errors.Join(all...)
}

// prefixed engages clusters under a prefix.
type prefixed struct {
	prefix string
	e      Engager
}

func (p prefixed) name(n string) string { return p.prefix + "-" + n }

func (p prefixed) Engage(name string, cfg *rest.Config) { p.e.Engage(p.name(name), cfg) }

func (p prefixed) Disengage(name string) { p.e.Disengage(p.name(name)) }

func (p prefixed) EngageIn(name string, cfg *rest.Config, namespaces ...string) {
	if ne, ok := p.e.(NamespacedEngager); ok {
		ne.EngageIn(p.name(name), cfg, namespaces...)
		return
	}
	p.e.Engage(p.name(name), cfg)
}
