package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/opgen-sdk/opgen/pkg/plug"
)

// PodPrinter logs every Pod: a controller of a built-in kind beside the
// project's own kinds.
//
// +opgen:controller:for=v1.Pod
// +opgen:controller:reconcileEvery=10m
// +opgen:controller:workers=2
type PodPrinter struct{}

// Reconcile prints the Pod's phase, for every verb but Delete: a handler
// with Reconcile alone is complete.
func (p *PodPrinter) Reconcile(_ context.Context, a *plug.Action[*corev1.Pod]) error {
	a.Normal("Printed", "%s is %s", a.Object.Name, a.Object.Status.Phase)
	return nil
}
