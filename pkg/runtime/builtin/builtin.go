package builtin

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// Options narrow what a Kind's controller watches. The zero value watches
// every object of the kind in the operator's namespaces.
type Options struct {
	// LabelSelector, such as "app=web", limits the watch to matching
	// objects. Default: all.
	LabelSelector string
	// FieldSelector, such as "spec.nodeName=" for unscheduled Pods,
	// limits the watch to matching objects; the fields a kind supports
	// are the API server's (metadata.name and metadata.namespace always).
	// An object that stops matching looks deleted to the controller.
	// Default: all.
	FieldSelector string
}

func (o Options) apply(lo *metav1.ListOptions) {
	if o.LabelSelector != "" {
		lo.LabelSelector = o.LabelSelector
	}
	if o.FieldSelector != "" {
		lo.FieldSelector = o.FieldSelector
	}
}

// typedClient is what client-go's typed clients offer for every kind.
type typedClient[T apis.Object, L k8sruntime.Object] interface {
	plug.Client[T]
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// newKind builds a Kind from a typed client: its informer lists and
// watches through the client with opts' selectors, and its controllers
// see every change (runtime.AnyChange), status included.
func newKind[T apis.Object, L k8sruntime.Object](op *runtime.Operator, opts Options, gvk schema.GroupVersionKind, resource string, namespaced bool,
	client func(cs kubernetes.Interface, ns string) typedClient[T, L]) runtime.Kind[T] {
	cs := op.Clientset()
	lw := func(ns string) *cache.ListWatch { return listWatch(client(cs, ns), opts) }
	return runtime.Kind[T]{
		GVK:          gvk,
		Resource:     resource,
		Namespaced:   namespaced,
		ListWatch:    lw,
		Client:       func(ns string) plug.Client[T] { return client(cs, ns) },
		UpdateFilter: func(oldObj, newObj T) bool { return runtime.AnyChange(oldObj, newObj) },
	}
}

func listWatch[T apis.Object, L k8sruntime.Object](c typedClient[T, L], opts Options) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, lo metav1.ListOptions) (k8sruntime.Object, error) {
			opts.apply(&lo)
			return c.List(ctx, lo)
		},
		WatchFuncWithContext: func(ctx context.Context, lo metav1.ListOptions) (watch.Interface, error) {
			opts.apply(&lo)
			return c.Watch(ctx, lo)
		},
	}
}
