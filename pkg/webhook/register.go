package webhook

import (
	"fmt"
	"weak"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/opgen-sdk/opgen/apis"
	"github.com/opgen-sdk/opgen/pkg/internal/runtimehooks"
	"github.com/opgen-sdk/opgen/pkg/runtime"
)

// Validate serves v as the validating webhook of kind on op's webhook
// server (at the Hook's Path), called on create and update of the kind's
// objects in kind's version, and on delete when v is a DeleteValidator.
// The generated Setup calls it for a kind marked +opgen:webhook:validate.
// Call it before Operator.Run.
func Validate[T apis.Object](op *runtime.Operator, kind runtime.Kind[T], v Validator[T]) error {
	if v == nil {
		return fmt.Errorf("webhook.Validate: %s: the Validator is nil", kind.GVK)
	}
	_, deletes := v.(DeleteValidator[T])
	return register(op, kind, &admitter[T]{validate: v}, Hook{Type: Validating, Delete: deletes})
}

// Default serves d as the defaulting (mutating) webhook of kind on op's
// webhook server, called on create and update; the API server applies the
// JSON patch from the object it sent to the object d left. On create the
// patch also adds the finalizer of the kind's controller when its handler
// implements Delete (the runtime's finalizer at create), so that the object is
// protected from its creation. The generated
// Setup calls it for a kind marked +opgen:webhook:default. Call it before
// Operator.Run.
func Default[T apis.Object](op *runtime.Operator, kind runtime.Kind[T], d Defaulter[T]) error {
	if d == nil {
		return fmt.Errorf("webhook.Default: %s: the Defaulter is nil", kind.GVK)
	}
	return register(op, kind, &admitter[T]{mutate: d, finalizer: createFinalizer(op, kind.GVK.GroupKind())}, Hook{Type: Mutating})
}

// createFinalizer asks op, while it lives, for the finalizer a new object
// of gk carries from its creation. It holds op weakly: the server must not
// keep its operator alive (see server).
func createFinalizer(op *runtime.Operator, gk schema.GroupKind) func(metav1.Object) string {
	wp := weak.Make(op)
	return func(obj metav1.Object) string {
		if op := wp.Value(); op != nil {
			return runtimehooks.Of[*runtime.Operator]().FinalizerAtCreate(op, gk, obj)
		}
		return ""
	}
}

// register serves a as the webhook h (its Type and Delete) of kind.
func register[T apis.Object](op *runtime.Operator, kind runtime.Kind[T], a *admitter[T], h Hook) error {
	if kind.GVK.Empty() || kind.Resource == "" {
		return fmt.Errorf("webhook: the Kind has no GVK or Resource (%v, %q); pass the generated <Kind>Kind", kind.GVK, kind.Resource)
	}
	s, err := serverFor(op)
	if err != nil {
		return err
	}
	a.server = s
	h.GVK, h.Resource, h.Namespaced = kind.GVK, kind.Resource, kind.Namespaced
	a.hook = h
	return s.addHook(a.hook, a)
}

// Convert serves the conversions of the kind hub names between every
// version whose Go type scheme holds, on ConvertPath: an object goes from
// its version to hub and from hub to the desired version with
// scheme.Convert, so scheme must hold the conversion functions between
// each version and the hub (the generated AddToScheme of each version
// registers them). resource is the kind's plural; in local mode the
// operator points the conversion stanza of the CRD resource.group at
// itself. The generated Setup calls it for a kind whose served versions
// differ. Call it before Operator.Run.
func Convert(op *runtime.Operator, scheme *k8sruntime.Scheme, hub schema.GroupVersionKind, resource string) error {
	switch {
	case scheme == nil:
		return fmt.Errorf("webhook.Convert: %s: the scheme is nil", hub)
	case hub.Empty() || resource == "":
		return fmt.Errorf("webhook.Convert: the hub (%v) and resource (%q) are required", hub, resource)
	case !scheme.Recognizes(hub):
		return fmt.Errorf("webhook.Convert: the scheme does not know the hub %s; add the hub version's AddToScheme", hub)
	}
	s, err := serverFor(op)
	if err != nil {
		return err
	}
	s.mu.Lock()
	c := s.conversions
	first := c == nil
	if first {
		c = &converter{server: s, kinds: map[schema.GroupKind]convertedKind{}}
	}
	s.mu.Unlock()
	if err := c.add(convertedKind{scheme: scheme, hub: hub, resource: resource}); err != nil {
		return err
	}
	if !first {
		return nil
	}
	if err := s.handle(ConvertPath, c); err != nil {
		return err
	}
	s.mu.Lock()
	s.conversions = c
	s.mu.Unlock()
	return nil
}
