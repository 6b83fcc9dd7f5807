package runtime

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/plug"
)

// Register adds a controller for kind, run by h, to op, and returns it for
// callers that read its cache (Controller.Get) or enqueue keys themselves.
// It must be called before op.Run. When h implements Configurer, its
// Configure method adjusts opts first. The generated glue of every kind
// calls it; a kind of your own (see Kind) calls it in main.go.
func Register[T apis.Object](op *Operator, kind Kind[T], h plug.Handler[T], opts ControllerOptions[T]) (*Controller[T], error) {
	if err := checkKind(kind, h); err != nil {
		return nil, err
	}
	if cf, ok := h.(Configurer[T]); ok {
		cf.Configure(&opts)
	}
	c, err := newController(op, kind, h, opts)
	if err != nil {
		return nil, err
	}
	return c, op.plan.addController(c)
}

func checkKind[T apis.Object](kind Kind[T], h plug.Handler[T]) error {
	switch {
	case h == nil:
		return errors.New("runtime.Register: the handler is nil")
	case kind.GVK.Kind == "" || kind.GVK.Version == "":
		return errors.New("runtime.Register: Kind.GVK is incomplete; use the Kind generated for the type")
	case kind.Resource == "":
		return fmt.Errorf("runtime.Register: Kind.Resource of %s is empty; set it to the plural resource name", kind.GVK.Kind)
	case kind.ListWatch == nil || kind.Client == nil:
		return fmt.Errorf("runtime.Register: Kind of %s lacks ListWatch or Client; use the Kind generated for the type, or package builtin for a built-in kind", kind.GVK.Kind)
	}
	return nil
}

// setup creates the informers of the kind and hooks up the owned and
// watched kinds. It first resolves every owned and watched kind, so an
// error that a kind is not served (meta.IsNoMatchError) leaves no handler
// behind: startCaches calls setup again once the kind's CRD is installed.
func (c *Controller[T]) setup(ctx context.Context) error {
	for _, gvk := range c.opts.Owns {
		if _, err := c.op.caches.kind(gvk, c.op.sharding != nil); err != nil {
			return fmt.Errorf("runtime: controller %s owns %w", c.name, err)
		}
	}
	for _, w := range c.opts.Watches {
		if w.Map == nil {
			continue // watch reports it
		}
		if _, err := c.op.caches.kind(w.Kind, false); err != nil {
			return fmt.Errorf("runtime: controller %s watches %w", c.name, err)
		}
	}
	for _, ns := range c.op.opts.namespaces(c.kind.Namespaced) {
		if _, ok := c.objects.caches[ns]; ok {
			continue
		}
		inf, err := c.newInformer(ns)
		if err != nil {
			return fmt.Errorf("runtime: controller %s: %w", c.name, err)
		}
		c.objects.caches[ns] = inf
		if c.op.sharding == nil {
			c.op.seen.Add(schema.GroupResource{Group: c.kind.GVK.Group, Resource: c.kind.Resource}, ns, inf)
		}
	}
	for _, gvk := range c.opts.Owns {
		if err := c.own(gvk); err != nil {
			return err
		}
	}
	for _, w := range c.opts.Watches {
		if err := c.watch(w); err != nil {
			return err
		}
	}
	return nil
}
