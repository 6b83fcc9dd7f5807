// Package runtimehooks reaches the parts of a runtime.Operator that
// opgen's own packages need and its users do not: the webhook server asks
// for the finalizer of a new object (pkg/webhook), the test kit whether
// the caches saw a write (pkg/optest), a host of the operator for its
// health (pkg/runtime/ctrlbridge), and a fleet's main whether to run
// again (pkg/runtime/fleet). Package runtime sets them when it is
// initialized, so they cannot be nil where runtime is linked.
package runtimehooks

import (
	"context"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Hooks are the functions of an operator of type O (*runtime.Operator).
type Hooks[O any] struct {
	// FinalizerAtCreate is the finalizer a new object of kind gk should
	// carry from its creation, or "" (see the runtime's finalizer).
	FinalizerAtCreate func(op O, gk schema.GroupKind, obj metav1.Object) string
	// Seen reports whether the operator's caches of gr saw a write
	// someone made of obj, as its answer shows it.
	Seen func(op O, gr schema.GroupResource, obj metav1.Object) bool
	// CheckHealth is what the operator's /healthz answers.
	CheckHealth func(op O, r *http.Request) error
	// RunAgain reports whether a main runs the operator again after its
	// Run returned err.
	RunAgain func(ctx context.Context, op O, err error) bool
}

var hooks any

// Set sets the hooks; package runtime calls it once, when initialized.
func Set[O any](h Hooks[O]) { hooks = h }

// Of returns the hooks of operators of type O.
func Of[O any]() Hooks[O] { return hooks.(Hooks[O]) }
