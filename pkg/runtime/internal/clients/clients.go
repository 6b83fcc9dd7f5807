// Package clients builds the clients an operator talks to the API server
// with, on one shared HTTP client, and the Leases' own connection.
//
// client-go's clientset is not among what Build makes: it holds a client
// of every built-in group, and an operator that never asks for it should
// neither page its code in nor link its informers (the RSS of an operator
// over an empty namespace). Clientset builds it on first use.
package clients

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	eventsclient "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// Set is the clients of one operator.
type Set struct {
	Config *rest.Config
	// HTTP is the shared client of everything but the Leases' writes.
	HTTP      *http.Client
	Discovery *discovery.DiscoveryClient
	Dynamic   dynamic.Interface
	Metadata  metadata.Interface
	Events    eventsclient.EventsV1Interface
	// Coordination reads Leases on the shared client (sharding's caches).
	Coordination coordinationclient.CoordinationV1Interface
	// Leases reads and writes the Leases of leader election and sharding
	// over LeaseHTTP, a connection of their own with a rate limit of its
	// own: a renewal never waits behind the caches' lists and watches (a
	// sharded member taking its buckets starts dozens at once).
	Leases    coordinationclient.CoordinationV1Interface
	LeaseHTTP *http.Client

	once      sync.Once
	clientset *kubernetes.Clientset // concrete, for the reason Factory gives
}

// Factory is what the runtime calls of an informers.SharedInformerFactory.
// The runtime holds its factories as Factory, and the clientset as its
// concrete type: a field of client-go's interfaces would link every typed
// client, informer and apply configuration their methods name (2 MB of
// read-only data, resident in every process) into every operator, even
// one that never calls Operator.Clientset or Operator.Informers.
type Factory interface {
	StartWithContext(ctx context.Context)
	WaitForCacheSync(stop <-chan struct{}) map[reflect.Type]bool
	ForResource(gvr schema.GroupVersionResource) (informers.GenericInformer, error)
}

// Build makes the clients of cfg on hc, and the Leases' connection.
func Build(cfg *rest.Config, hc *http.Client) (*Set, error) {
	s := &Set{Config: cfg, HTTP: hc}
	var err error
	if s.Discovery, err = discovery.NewDiscoveryClientForConfigAndClient(cfg, hc); err != nil {
		return nil, err
	}
	if s.Dynamic, err = dynamic.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, err
	}
	if s.Metadata, err = metadata.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, err
	}
	if s.Events, err = eventsclient.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, err
	}
	if s.Coordination, err = coordinationclient.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, err
	}
	leaseCfg := rest.CopyConfig(cfg)
	leaseCfg.RateLimiter = nil
	leaseCfg.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext // no shared transport
	if s.LeaseHTTP, err = rest.HTTPClientFor(leaseCfg); err != nil {
		return nil, fmt.Errorf("build the HTTP client of the Leases: %w", err)
	}
	if s.Leases, err = coordinationclient.NewForConfigAndClient(leaseCfg, s.LeaseHTTP); err != nil {
		return nil, err
	}
	return s, nil
}

// Clientset returns client-go's clientset on the shared HTTP client,
// built on the first call. Only this method may make it: a clientset
// made where it is not called would link every group's clients.
func (s *Set) Clientset() kubernetes.Interface {
	s.once.Do(func() {
		cs, err := kubernetes.NewForConfigAndClient(s.Config, s.HTTP)
		if err != nil {
			// Build made each group's client as this would, from the
			// same config and client.
			panic(fmt.Sprintf("runtime: client-go's clientset on a config its group clients accepted: %v", err))
		}
		s.clientset = cs
	})
	return s.clientset
}
