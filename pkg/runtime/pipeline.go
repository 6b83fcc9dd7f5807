package runtime

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
	"github.com/opgen-sdk/opgen/pkg/runtime/internal/observe"
)

// pipelineOf builds the controller's pipeline and its steps' Env.
type pipelineOf[T apis.Object] struct{ c *Controller[T] }

// newEnv returns what the built-in steps need to know about this controller
// (ControllerOptions.Pipeline receives it). Its client and descendant store
// count the writes the steps make through them in opgen_api_writes_total.
func (s pipelineOf[T]) env() plug.Env[T] {
	c := s.c
	count := func(what string) { c.op.metrics.Writes.WithLabelValues(c.name, what).Inc() }
	env := plug.Env[T]{
		GVK:          c.kind.GVK,
		Controller:   c.name,
		FieldManager: c.op.opts.Name,
		Finalizer:    c.finalizer,
		Deletes:      c.deletes,
		Client:       func(ns string) plug.Client[T] { return countedClient[T]{c.kind.Client(ns), count, ns, c} },
		Recorder:     c.op.recorder,
	}
	if len(c.opts.Owns) > 0 {
		env.Descendants = countedStore{c.store, count}
		env.Retain = c.opts.Retain
	}
	return env
}

// countedClient counts each successful patch of the kind's objects: of the
// status subresource as "status", of the object itself (the Finalizer
// step's only write) as "finalizer". The controller remembers what the
// patch returned (internal/ownwrites).
type countedClient[T apis.Object] struct {
	plug.Client[T]
	count     func(what string)
	namespace string
	c         *Controller[T]
}

func (c countedClient[T]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error) {
	key := cache.ObjectName{Namespace: c.namespace, Name: name}
	c.c.writes.Begin(key)
	obj, err := c.Client.Patch(ctx, name, pt, data, opts, subresources...)
	if c.c.writes.End(key, obj, err == nil, "") {
		c.c.wake(key, true)
	}
	if err == nil {
		what := "finalizer"
		if len(subresources) > 0 && subresources[0] == "status" {
			what = "status"
		}
		c.count(what)
	}
	return obj, err
}

// countedStore counts each applied descendant as "descendant" and each
// pruned one as "prune".
type countedStore struct {
	plug.DescendantStore
	count func(what string)
}

func (s countedStore) Apply(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	got, err := s.DescendantStore.Apply(ctx, obj)
	if err == nil {
		s.count("descendant")
	}
	return got, err
}

func (s countedStore) Create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	got, err := s.DescendantStore.Create(ctx, obj)
	if err == nil {
		s.count("descendant")
	}
	return got, err
}

func (s countedStore) Delete(ctx context.Context, k plug.ObjectKey, uid types.UID, propagation metav1.DeletionPropagation) error {
	err := s.DescendantStore.Delete(ctx, k, uid, propagation)
	if err == nil {
		s.count("delete")
	}
	return err
}

func (s countedStore) Prune(ctx context.Context, owner types.UID, keep map[plug.ObjectKey]bool, prune func(schema.GroupVersionKind) bool) (int, error) {
	n, err := s.DescendantStore.Prune(ctx, owner, keep, prune)
	for range n {
		s.count("prune")
	}
	return n, err
}

func (s pipelineOf[T]) build() plug.Pipeline[T] {
	c := s.c
	return observe.Traced(c.op.tracer, s.steps())
}

func (s pipelineOf[T]) steps() plug.Pipeline[T] {
	c := s.c
	if c.opts.Pipeline != nil {
		return c.opts.Pipeline(c.env, c.handler)
	}
	p := plug.Default(c.env, c.handler)
	if len(c.opts.Steps) == 0 {
		return p
	}
	out := append(plug.Pipeline[T]{}, p[:len(p)-1]...)
	out = append(out, c.opts.Steps...)
	return append(out, p[len(p)-1])
}
