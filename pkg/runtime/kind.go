package runtime

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/watchjson"
)

// Kind describes one API kind to the runtime in typed terms: how to watch it
// and how to write it. opgen generates a Kind for each custom kind from the
// generated clientset and informers; client-go's own clientset and
// informers give the built-in kinds theirs (see Builtin kinds in this
// package's documentation).
type Kind[T apis.Object] struct {
	// GVK is the kind's group, version and kind.
	GVK schema.GroupVersionKind
	// Resource is the plural resource name, such as "greetings".
	Resource string
	// Namespaced is false for cluster-scoped kinds.
	Namespaced bool
	// ListWatch lists and watches the kind's objects in namespace
	// (metav1.NamespaceAll for all). The runtime builds the kind's
	// informers from it, with its transform (managedFields stripping) and
	// the watch telemetry, relists included (telemetry.WatchRelisted).
	ListWatch func(namespace string) *cache.ListWatch
	// Client returns the typed client for namespace ("" for
	// cluster-scoped kinds).
	Client func(namespace string) plug.Client[T]
	// UpdateFilter is the default ControllerOptions.UpdateFilter of the
	// kind's controllers. nil means GenerationOrMetadataChanged. Built-in kinds,
	// whose status others write, use AnyChange so that a handler sees
	// status changes (see package builtin).
	UpdateFilter func(oldObj, newObj T) bool
}

// GVR returns the kind's group, version and resource.
func (k Kind[T]) GVR() schema.GroupVersionResource {
	return k.GVK.GroupVersion().WithResource(k.Resource)
}

// Client is the Kind.Client opgen generates: it gets and patches the
// resource in namespace ("" for a cluster-scoped one) through c (a
// generated clientset's RESTClient) as the clientset's typed client does,
// and decodes the object the server returns in one pass, where client-go
// reads its JSON three times.
func Client[T apis.Object](c rest.Interface, resource, namespace string) plug.Client[T] {
	return watchjson.NewClient[T](c, resource, namespace)
}

// ListWatch is the Kind.ListWatch opgen generates: it lists the resource
// in namespace through c (a generated clientset's RESTClient) as
// client-go's cache.NewListWatchFromClient does, and watches it with a
// decoder of T's JSON events that reads each event once, where client-go's
// scans it three times (docs/runtime.md, "How the caches fill").
func ListWatch[T apis.Object](c rest.Interface, resource, namespace string) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (k8sruntime.Object, error) {
			return c.Get().Namespace(namespace).Resource(resource).VersionedParams(&opts, metav1.ParameterCodec).Do(ctx).Get()
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return watchjson.Watch[T](ctx, c, resource, namespace, opts)
		},
	}
}
