package controller

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/opgen-sdk/opgen/pkg/plug"
)

// IngressJanitor cleans up after Ingresses. Its methods come from an
// embedded type of this package, which opgen sees.
//
// +opgen:controller:for=networking.k8s.io/v1.Ingress
type IngressJanitor struct {
	ingressBase
}

type ingressBase struct{}

func (*ingressBase) Reconcile(context.Context, *plug.Action[*networkingv1.Ingress]) error { return nil }
func (*ingressBase) Delete(context.Context, *plug.Action[*networkingv1.Ingress]) error    { return nil }
