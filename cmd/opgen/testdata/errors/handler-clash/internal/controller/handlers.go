// Package controller has handler types whose glue would clash with the
// glue of the kind Widget.
package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/opgen-sdk/opgen/pkg/plug"
)

// WidgetController is the name the glue of Widget gives its handler.
//
// +opgen:controller:for=v1.Pod
type WidgetController struct{ podBase }

// Widget would get SetupWidget and WidgetOptions, as the kind does.
//
// +opgen:controller:for=v1.Pod
type Widget struct{ podBase }

type podBase struct{}

func (*podBase) Add(context.Context, *plug.Action[*corev1.Pod]) error       { return nil }
func (*podBase) Modify(context.Context, *plug.Action[*corev1.Pod]) error    { return nil }
func (*podBase) Reconcile(context.Context, *plug.Action[*corev1.Pod]) error { return nil }
