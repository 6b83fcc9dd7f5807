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

// Add prints a new Pod.
func (p *PodPrinter) Add(ctx context.Context, a *plug.Action[*corev1.Pod]) error {
	return p.Reconcile(ctx, a)
}

// Modify prints a Pod whose spec changed.
func (p *PodPrinter) Modify(ctx context.Context, a *plug.Action[*corev1.Pod]) error {
	return p.Reconcile(ctx, a)
}

// Reconcile prints the Pod's phase.
func (p *PodPrinter) Reconcile(_ context.Context, a *plug.Action[*corev1.Pod]) error {
	a.Normal("Printed", "%s is %s", a.Object.Name, a.Object.Status.Phase)
	return nil
}
