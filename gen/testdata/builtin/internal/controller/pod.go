package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/opgen-sdk/opgen/pkg/plug"
)

// PodReporter keeps a report Secret per run of a Pod and deletes old ones
// itself, in a helper whose action parameter names the kind: the role
// keeps delete on the retained Secrets.
//
// +opgen:controller:for=v1.Pod
// +opgen:controller:owns=v1.Secret
// +opgen:controller:retain=v1.Secret
type PodReporter struct{}

// Reconcile deletes the oldest report.
func (r *PodReporter) Reconcile(ctx context.Context, a *plug.Action[*corev1.Pod]) error {
	return func(old *corev1.Secret) error { return forget(ctx, a, old) }(nil)
}

func forget(ctx context.Context, a *plug.Action[*corev1.Pod], old *corev1.Secret) error {
	return plug.DeleteNow(ctx, a, old, "")
}

// ServiceArchiver keeps a Job per change of a Service and never deletes
// one: the role has no delete on the retained Jobs.
//
// +opgen:controller:for=v1.Service
// +opgen:controller:owns=batch/v1.Job
// +opgen:controller:retain=batch/v1.Job
type ServiceArchiver struct{}

// Reconcile creates nothing here.
func (s *ServiceArchiver) Reconcile(context.Context, *plug.Action[*corev1.Service]) error {
	return nil
}
